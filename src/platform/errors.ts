import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { ERROR_CATALOGUE, type ErrorCode, errorTypeUrl } from "./error-catalogue";

export interface FieldError {
  path: string;
  message: string;
}

/**
 * RFC 9457 extension members: what a client needs to act on the problem as data rather than prose
 * (e.g. an export's status). Documented with the operation that answers them; snake_case like every key.
 */
export type ProblemExtensions = Record<string, string | number | boolean | null>;

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly errors?: FieldError[];
  readonly headers: Record<string, string>;
  readonly extensions?: ProblemExtensions;

  constructor(
    code: ErrorCode,
    detail: string,
    options: { errors?: FieldError[]; headers?: Record<string, string>; extensions?: ProblemExtensions } = {},
  ) {
    super(detail);
    this.code = code;
    this.status = ERROR_CATALOGUE[code].status;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
    this.extensions = options.extensions;
  }
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  code: ErrorCode;
  detail: string;
  errors?: FieldError[];
  request_id: string;
  [extension: string]: unknown;
}

/** Members of every problem body; an extension of the same name is dropped rather than let stand in for one. */
const STANDARD_MEMBERS = new Set([
  "type",
  "title",
  "status",
  "code",
  "detail",
  "instance",
  "errors",
  "request_id",
]);

export function problemBody(
  origin: string,
  code: ErrorCode,
  detail: string,
  requestId: string,
  errors?: FieldError[],
  extensions?: ProblemExtensions,
): ProblemBody {
  const { status, title } = ERROR_CATALOGUE[code];
  const extra = extensions
    ? Object.fromEntries(Object.entries(extensions).filter(([name]) => !STANDARD_MEMBERS.has(name)))
    : {};
  // The standard members first, as in every problem, the extensions after them, request_id last.
  return {
    type: errorTypeUrl(origin, code),
    title,
    status,
    code,
    detail,
    ...(errors && errors.length > 0 ? { errors } : {}),
    ...extra,
    request_id: requestId,
  };
}

export function problemResponse(c: Context, error: ApiError): Response {
  const requestId = (c.get("requestId") as string | undefined) ?? "unknown";
  const headers = new Headers(error.headers);
  headers.set("Content-Type", "application/problem+json");
  // An error describes one request at one moment (a 401, a 429 before the limit frees): never cached.
  if (!headers.has("Cache-Control")) headers.set("Cache-Control", "no-store");
  if (error.status === 401 && !headers.has("WWW-Authenticate")) {
    headers.set("WWW-Authenticate", 'Bearer realm="lingua"');
  }
  return new Response(
    JSON.stringify(
      problemBody(
        new URL(c.req.url).origin,
        error.code,
        error.message,
        requestId,
        error.errors,
        error.extensions,
      ),
    ),
    {
      status: error.status,
      headers,
    },
  );
}

/** Maps anything thrown below the router to a problem response; unknown errors never leak their message. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof HTTPException) {
    if (err.status === 400 && /json/i.test(err.message)) {
      return new ApiError("malformed_json", "The request body is not valid JSON.");
    }
    if (err.status === 413) return new ApiError("payload_too_large", err.message);
    if (err.status === 415)
      return new ApiError(
        "unsupported_media_type",
        "Send the request body as `Content-Type: application/json`.",
      );
    const code = (Object.keys(ERROR_CATALOGUE) as ErrorCode[]).find(
      (k) => ERROR_CATALOGUE[k].status === err.status,
    );
    if (code) return new ApiError(code, err.message || ERROR_CATALOGUE[code].title);
  }
  return new ApiError(
    "internal_error",
    "An unexpected error occurred. Quote the request id when contacting support.",
  );
}

interface ZodIssueLike {
  path: ReadonlyArray<PropertyKey>;
  message: string;
  code?: string;
  keys?: string[];
  /** invalid_union: the issues of each alternative. */
  errors?: ReadonlyArray<ReadonlyArray<ZodIssueLike>>;
}

/** zod issues → our `errors` array: every issue, not only the first. */
export function fieldErrorsFromZod(issues: ReadonlyArray<ZodIssueLike>): FieldError[] {
  const out: FieldError[] = [];
  for (const issue of issues) {
    const base = issue.path.map(String).join(".");
    if (issue.code === "invalid_union" && issue.errors && issue.errors.length > 0) {
      // Report the alternative the input came closest to, as if it were the only one.
      const closest = issue.errors.reduce((best, alternative) =>
        alternative.length < best.length ? alternative : best,
      );
      out.push(
        ...fieldErrorsFromZod(closest.map((inner) => ({ ...inner, path: [...issue.path, ...inner.path] }))),
      );
      continue;
    }
    if (issue.code === "unrecognized_keys" && issue.keys) {
      out.push(...unrecognisedFields(issue.keys, base));
    } else {
      const missing = issue.code === "invalid_type" && /received undefined$/.test(issue.message);
      out.push({ path: base, message: missing ? "is required" : issue.message });
    }
  }
  return out;
}

/** Fields (or query parameters) an operation does not know, each named, under `base` when nested. */
export function unrecognisedFields(keys: readonly string[], base = ""): FieldError[] {
  return keys.map((key) => ({ path: base ? `${base}.${key}` : key, message: "is not a recognised field" }));
}

export function validationError(errors: FieldError[]): ApiError {
  const detail = errors.map((e) => (e.path ? `${e.path}: ${e.message}` : e.message)).join("; ");
  return new ApiError("validation_failed", detail || "The request is not valid.", { errors });
}
