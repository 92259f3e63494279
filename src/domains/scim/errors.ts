import type { Context } from "hono";
import { ApiError } from "../../platform/errors";

/** RFC 7644 §3.12: the error response's schema. */
export const SCIM_ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error";
export const SCIM_CONTENT_TYPE = "application/scim+json";

/** RFC 7644 §3.12, table 9. */
export type ScimType =
  | "invalidFilter"
  | "tooMany"
  | "uniqueness"
  | "mutability"
  | "invalidSyntax"
  | "invalidPath"
  | "noTarget"
  | "invalidValue"
  | "invalidVers"
  | "sensitive";

/** An error of the SCIM service, answered in SCIM's own error schema (not problem+json). */
export class ScimError extends Error {
  constructor(
    readonly status: number,
    detail: string,
    readonly scimType?: ScimType,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }
}

/** The SCIM answer to an error of the platform or a domain: the same status, detail and headers. */
export function toScimError(error: unknown): ScimError {
  if (error instanceof ScimError) return error;
  if (error instanceof ApiError) {
    const scimType: ScimType | undefined =
      error.code === "email_taken" || error.code === "external_id_taken"
        ? "uniqueness"
        : error.code === "validation_failed"
          ? "invalidValue"
          : undefined;
    const detail = error.errors?.length
      ? `${error.message} ${error.errors.map((e) => `${e.path}: ${e.message}`).join("; ")}`
      : error.message;
    // Validation is 422 in the API; SCIM says 400 for a bad value.
    const status = error.status === 422 ? 400 : error.status;
    return new ScimError(status, detail, scimType, error.headers);
  }
  return new ScimError(
    500,
    "Something went wrong on our side; retry, and tell us the request id if it persists.",
  );
}

export function scimErrorResponse(c: Context, error: ScimError): Response {
  const body: Record<string, unknown> = { schemas: [SCIM_ERROR_SCHEMA], status: String(error.status) };
  if (error.scimType) body.scimType = error.scimType;
  body.detail = error.message;
  const headers = new Headers(error.headers);
  headers.set("Content-Type", SCIM_CONTENT_TYPE);
  if (error.status === 401 && !headers.has("WWW-Authenticate"))
    headers.set("WWW-Authenticate", 'Bearer realm="lingua-scim"');
  headers.set("Cache-Control", "no-store");
  return c.newResponse(JSON.stringify(body), error.status as 400, Object.fromEntries(headers));
}
