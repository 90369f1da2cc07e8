import type { Response } from "express";
import { CairnError, internal } from "../errors.js";

/** Errors raised by body-parser carry a `type`; map the ones a client can cause to Cairn errors. */
export function fromBodyParserError(error: unknown): CairnError | undefined {
  const type = (error as { type?: unknown } | null)?.type;
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
    case "encoding.unsupported":
      return new CairnError("unsupported_media_type", 415, "The body's charset or encoding is not supported.", "Send UTF-8 JSON.");
    default:
      return undefined;
  }
}

export function sendProblem(res: Response, error: CairnError): void {
  if (error.status === 401) res.setHeader("WWW-Authenticate", 'Bearer realm="cairn"');
  res.status(error.status).type("application/problem+json").send(JSON.stringify(error.toProblem()));
}

export function toCairnError(error: unknown): CairnError {
  if (error instanceof CairnError) return error;
  return fromBodyParserError(error) ?? internal();
}
