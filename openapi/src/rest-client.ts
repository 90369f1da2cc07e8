import type { OperationId, OperationOutput, OperationRequest } from "./operation-types.js";
import { restRequest, type RestRequest } from "./rest-request.js";

/** One operation of the contract called over REST: its success body, or an `ApiError`. */
export type RestCall = <K extends OperationId>(operationId: K, input: OperationRequest<K>) => Promise<OperationOutput<K>>;

/** What an error answer's problem document carries (the contract's `Problem`), as far as a client reads it. */
interface ProblemBody {
  code?: unknown;
  detail?: unknown;
  hint?: unknown;
}

export interface ApiErrorInit {
  /** The HTTP status; 0 when no answer came. */
  status: number;
  /**
   * The problem's stable `code`; `unreachable` when no answer came, `not_json` for a success answer that is not
   * JSON, and `http_<status>` for an error answer that is not a problem document (a proxy's page, say).
   */
  code: string;
  /** What went wrong, in the server's words when it sent a problem. */
  detail: string;
  /** What to do next, when the server said. */
  hint?: string | undefined;
  method: RestRequest["method"];
  /** The URL asked, or the target alone for a client without a base URL (a page calling its own origin). */
  url: string;
}

/**
 * memory-core did not answer an operation with success: its problem's code, detail and hint, the HTTP status,
 * and (for a failure below HTTP: no connection, a body that is not JSON) the underlying error as `cause`.
 * The one error class of the REST client; a caller turns it into its own words (a CLI line, a page's note).
 */
export class ApiError extends Error {
  override name = "ApiError";
  readonly status: number;
  readonly code: string;
  readonly detail: string;
  readonly hint: string | undefined;
  readonly method: RestRequest["method"];
  readonly url: string;

  constructor(init: ApiErrorInit, options?: { cause?: unknown }) {
    super(init.detail, options);
    this.status = init.status;
    this.code = init.code;
    this.detail = init.detail;
    this.hint = init.hint;
    this.method = init.method;
    this.url = init.url;
  }

  /** True when the server answered with a problem document (its `code` is the contract's). */
  get isProblem(): boolean {
    return this.status > 0 && this.code !== "not_json" && this.code !== `http_${this.status}`;
  }
}

export interface RestClientOptions {
  /** Where memory-core answers. Omitted by a page that memory-core serves, which calls its own origin. */
  baseUrl?: URL | undefined;
  /** The bearer token every request carries. */
  token: string;
}

/**
 * memory-core's operations over REST with one token: each call laid out by the contract's REST binding
 * (`restRequest`), JSON in and out, and every way it can fail turned into an `ApiError` here, at one boundary.
 * Only `fetch`, so the console bundles it for the browser as the ops CLI runs it in Node.
 */
export class RestClient {
  readonly baseUrl: URL | undefined;
  private readonly token: string;

  constructor(options: RestClientOptions) {
    this.baseUrl = options.baseUrl;
    this.token = options.token;
  }

  /** One operation of the contract: its success body, or an ApiError saying why not. */
  readonly call: RestCall = async <K extends OperationId>(operationId: K, input: OperationRequest<K>) => {
    const { method, target, body } = restRequest(operationId, input);
    const url = this.baseUrl ? new URL(target, this.baseUrl).href : target;
    const fail = (init: Omit<ApiErrorInit, "method" | "url">, cause?: unknown) =>
      new ApiError({ ...init, method, url }, cause === undefined ? undefined : { cause });
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      throw fail(
        { status: 0, code: "unreachable", detail: "Cairn did not answer.", hint: "Check that memory-core is running, then try again." },
        error,
      );
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      // The connection broke while the answer was read.
      throw fail(
        {
          status: 0,
          code: "unreachable",
          detail: "Cairn's answer was cut off.",
          hint: "Check that memory-core is running, then try again.",
        },
        error,
      );
    }
    let parsed: unknown;
    let parseError: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch (error) {
      parseError = error;
    }
    if (!response.ok) {
      const problem = (typeof parsed === "object" && parsed !== null ? parsed : {}) as ProblemBody;
      const status = response.status;
      if (typeof problem.code !== "string") {
        throw fail({ status, code: `http_${status}`, detail: response.statusText || `HTTP ${status}` });
      }
      throw fail({
        status,
        code: problem.code,
        detail: typeof problem.detail === "string" ? problem.detail : "",
        hint: typeof problem.hint === "string" ? problem.hint : undefined,
      });
    }
    if (parsed === undefined) {
      throw fail({ status: response.status, code: "not_json", detail: "Cairn's answer is not JSON." }, parseError);
    }
    // The contract's answer to this operation: what memory-core sends with a success status.
    return parsed as OperationOutput<K>;
  };
}
