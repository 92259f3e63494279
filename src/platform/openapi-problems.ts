import { type RouteConfig, z } from "@hono/zod-openapi";
import { ERROR_CATALOGUE } from "./error-catalogue";

/**
 * The problem+json responses of the OpenAPI document: the RFC 9457 body every error answers, the
 * error responses each operation declares (`tokenRoute` and `publicRoute` pick theirs, an operation
 * adds its own from `errorResponses`), and the 503 of an institution moving to another database.
 */

export const ProblemSchema = z
  .object({
    type: z.url().openapi({
      description:
        "The absolute URL of the code's entry in the error reference, on the API's own origin (`/api/docs/errors#<code>`).",
      example: "https://api.lingua.example/api/docs/errors#validation_failed",
    }),
    title: z.string().openapi({ example: "Validation failed" }),
    status: z.number().int().openapi({ example: 422 }),
    code: z
      .enum(Object.keys(ERROR_CATALOGUE) as [string, ...string[]])
      .openapi({ example: "validation_failed" }),
    detail: z.string().openapi({ example: "per_page: must be <= 100" }),
    errors: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .optional()
      .openapi({ description: "Every field that failed validation (validation errors only)." }),
    request_id: z.string().openapi({ example: "req_9f0c1c1e6a3b4d5e9b7a0e7f3e1a2b3c" }),
  })
  .openapi("Problem", { description: "RFC 9457 problem details; `code` is stable and machine-readable." });

function problem(description: string) {
  return { description, content: { "application/problem+json": { schema: ProblemSchema } } };
}

export const errorResponses = {
  400: problem(
    "Malformed JSON or request, or an `X-D1-Bookmark` that is not a bookmark (`invalid_bookmark`).",
  ),
  401: problem("Missing, malformed, unknown, expired or revoked token."),
  403: problem("The token lacks the ability named in `detail`, or the role does not allow the action."),
  404: problem("Not found, or owned by another institution."),
  409: problem("Conflict with the current state of the resource."),
  413: problem("Request body larger than 1 MiB."),
  415: problem("The body is not `application/json`."),
  422: problem("Validation failed; `errors` lists every failing field."),
  429: {
    ...problem("Rate limit exceeded; see `Retry-After`."),
    headers: {
      "Retry-After": {
        description: "Whole seconds after which the next request succeeds.",
        schema: { type: "integer" as const, minimum: 1 },
      },
    },
  },
  500: problem("Unexpected error; quote `request_id` to support."),
} as const;

/**
 * Every write of an institution, while a move switches the institution to another database: a
 * token's (every operation that is not a GET) and an entry point's without a token, which adds it.
 */
export const institutionMovingResponse = {
  ...problem(
    "`institution_moving`: the institution is being switched to another database; writes resume within seconds.",
  ),
  headers: {
    "Retry-After": {
      description: "Whole seconds after which to retry.",
      schema: { type: "integer" as const, minimum: 1 },
    },
  },
};

/** The error responses every operation declares; 413 and 415 only where it takes a body. */
export function pickErrors(hasBody: boolean): RouteConfig["responses"] {
  const {
    400: e400,
    401: e401,
    403: e403,
    404: e404,
    413: e413,
    415: e415,
    422: e422,
    429: e429,
    500: e500,
  } = errorResponses;
  return {
    // Every operation takes `X-D1-Bookmark`, and refuses a malformed one with 400.
    400: e400,
    401: e401,
    403: e403,
    422: e422,
    429: e429,
    500: e500,
    404: e404,
    ...(hasBody ? { 413: e413, 415: e415 } : {}),
  };
}
