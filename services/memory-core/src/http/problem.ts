import type { Response } from "express";
import { CairnError, internal, RETRY_AFTER_SECONDS } from "../errors.js";

/** The Content-Encodings a body may arrive in; anything else is refused before the body is read. */
export const BODY_ENCODINGS: ReadonlySet<string> = new Set(["identity", "gzip", "deflate"]);

export const unsupportedEncoding = () =>
  new CairnError(
    "unsupported_media_type",
    415,
    "The body's Content-Encoding is not one this server decodes.",
    "Send the body uncompressed, or gzip- or deflate-compressed with a matching Content-Encoding header.",
  );

/**
 * Errors raised while reading a body (body-parser, raw-body, zlib) carry a `type`, or at least a 4xx
 * `status`: map the ones a client can cause to Cairn errors.
 */
export function fromBodyParserError(error: unknown): CairnError | undefined {
  const { type, status, errno } = (error ?? {}) as { type?: unknown; status?: unknown; errno?: unknown };
  switch (type) {
    case "entity.parse.failed":
      return new CairnError(
        "malformed_json",
        400,
        "The request body is not valid JSON.",
        "Send one JSON object with Content-Type: application/json.",
      );
    case "entity.too.large":
      return new CairnError(
        "payload_too_large",
        413,
        "The request body is larger than the server accepts.",
        "Shorten the fields (each text field takes at most 32768 characters) or split the entry.",
      );
    case "charset.unsupported":
      return new CairnError("unsupported_media_type", 415, "The body's charset is not supported.", "Send UTF-8 JSON.");
    case "encoding.unsupported":
      return unsupportedEncoding();
  }
  if (typeof status !== "number" || status < 400 || status >= 500) return undefined;
  // zlib's errors carry an errno: the bytes are not what the Content-Encoding header says they are.
  if (typeof errno === "number") {
    return new CairnError(
      "malformed_json",
      400,
      "The request body does not decode as its Content-Encoding says.",
      "Send the body uncompressed, or compressed exactly as the Content-Encoding header names (gzip or deflate).",
    );
  }
  return new CairnError(
    "malformed_json",
    400,
    "The request body could not be read as sent.",
    "Send one JSON object with Content-Type: application/json and a Content-Length that matches it.",
  );
}

export function sendProblem(res: Response, error: CairnError): void {
  res.locals.problemCode = error.code;
  if (error.status === 401) res.setHeader("WWW-Authenticate", 'Bearer realm="cairn"');
  if (error.status === 503) res.setHeader("Retry-After", String(RETRY_AFTER_SECONDS));
  res.status(error.status).type("application/problem+json").send(JSON.stringify(error.toProblem()));
}

export function toCairnError(error: unknown): CairnError {
  if (error instanceof CairnError) return error;
  return fromBodyParserError(error) ?? internal({ cause: error });
}
