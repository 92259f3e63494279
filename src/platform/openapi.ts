import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { createRoute, OpenAPIHono, type RouteConfig, z } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import type { Ability } from "./auth/abilities";
import { authenticate, requireAbility } from "./auth/middleware";
import { ERROR_CATALOGUE } from "./error-catalogue";
import { fieldErrorsFromZod, unrecognisedFields, validationError } from "./errors";
import { BOOKMARK_HEADER, provideContext } from "./http/context-middleware";
import { applyApiConventions } from "./http/conventions";
import { idempotent, REPLAYED_HEADER_DOC } from "./http/idempotency";
import { inInstitutionOfPath, namesInstitution } from "./http/institution-path";

export type ApiApp = OpenAPIHono<AppEnv>;

/** An app for documented operations: our conventions around the routes `register` adds. */
export function createApiApp(register: (app: ApiApp) => void): ApiApp {
  const app = new OpenAPIHono<AppEnv>({
    // Every validation failure, with every issue, in our problem format.
    defaultHook: (result) => {
      if (!result.success) throw validationError(fieldErrorsFromZod(result.error.issues));
    },
  });
  return applyApiConventions(app, (api) => {
    api.use("*", provideContext);
    register(api);
  });
}

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

const inFlight = {
  ...errorResponses[409],
  description: "`idempotency_in_flight`: a request with this Idempotency-Key is still in flight.",
};

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

const rateLimitHeaderDocs = {
  "X-RateLimit-Limit": {
    description: "Requests allowed per rolling window.",
    schema: { type: "integer" as const },
  },
  "X-RateLimit-Remaining": {
    description: "Requests left in the current window.",
    schema: { type: "integer" as const },
  },
  "X-RateLimit-Reset": {
    description: "Seconds until the full limit is available again.",
    schema: { type: "integer" as const },
  },
  RateLimit: {
    description:
      'IETF draft: `"minute";r=<remaining>;t=<reset>` (another policy where the operation says so).',
    schema: { type: "string" as const },
  },
  "RateLimit-Policy": {
    description: 'IETF draft: `"minute";q=<limit>;w=60` (another policy where the operation says so).',
    schema: { type: "string" as const },
  },
};

const bookmarkDescription =
  "Read-your-writes across requests (D1 sessions, docs/design/d1-sessions.md): the position in the database this response reflects. Send it back in the next request's `X-D1-Bookmark` and that request reads at least this state, wherever it is served. Absent when the request read nothing and sent none. For an institution in another database than the first it starts with that database's name (`DB_1:…`); treat it as opaque.";

/** On every response of every documented operation (`provideContext`), errors included. */
const bookmarkHeaderDocs = {
  [BOOKMARK_HEADER]: { description: bookmarkDescription, schema: { type: "string" as const } },
};

/** The request header of every documented operation: the bookmark of a response the client received. */
const bookmarkParameter = {
  name: BOOKMARK_HEADER,
  in: "header" as const,
  required: false,
  description:
    "The `X-D1-Bookmark` of the latest response you received, unchanged: this request then reads at least what that response reflected (your own writes included). Without it the request reads the latest state (the public catalogue: any recent state). Anything but a bookmark as this API sends it is `400 invalid_bookmark`.",
  schema: {
    type: "string" as const,
    pattern: "^(DB_[1-9][0-9]*:)?[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$",
  },
};

type Responses = RouteConfig["responses"];
type Parameters = NonNullable<RouteConfig["parameters"]>;

function withBookmarkParameter(parameters: RouteConfig["parameters"]): Parameters {
  return [...(parameters ?? []), bookmarkParameter] as Parameters;
}

function withBookmarkHeader(responses: Responses): Responses {
  const out: Responses = {};
  for (const [status, response] of Object.entries(responses)) {
    out[status] =
      "$ref" in response
        ? response
        : { ...response, headers: { ...bookmarkHeaderDocs, ...response.headers } };
  }
  return out;
}

function withHeaders(responses: Responses, replayable = false): Responses {
  const out: Responses = {};
  for (const [status, response] of Object.entries(responses)) {
    if ("$ref" in response) {
      out[status] = response;
      continue;
    }
    const headers = { ...rateLimitHeaderDocs, ...bookmarkHeaderDocs, ...response.headers };
    out[status] = {
      ...response,
      headers:
        replayable && status.startsWith("2")
          ? { ...headers, "Idempotent-Replayed": REPLAYED_HEADER_DOC }
          : headers,
    };
  }
  return out;
}

/**
 * An authenticated operation: bearer token, one DO round trip for auth and rate limit, then the
 * ability check, all before validation, so a caller without access learns nothing about the input.
 */
export function tokenRoute<const R extends RouteConfig>(
  ability: Ability | null,
  route: R,
  /** A request that needs no `ability` after all (`exemption` says which, in the description). */
  options: { exempt?: (c: Context<AppEnv>) => boolean; exemption?: string } = {},
): R {
  const middleware: MiddlewareHandler[] = [
    authenticate,
    ...(ability ? [requireAbility(ability, options.exempt)] : []),
  ];
  const requirement = ability
    ? `Requires the \`${ability}\` ability${options.exemption ? `, ${options.exemption}` : ""}.`
    : "Any valid token.";
  // An operation without query parameters refuses any it is sent, in the query validator's place
  // (validators run after the route's middleware) and with its error, without a schema to run.
  const takesNoQuery = !route.request?.query;
  const own = route.middleware ? [route.middleware].flat() : [];
  return createRoute({
    ...route,
    request: takesNoQuery ? route.request : strictQuery(route.request),
    description: [route.description, requirement].filter(Boolean).join("\n\n"),
    security: [{ bearerAuth: [] }],
    parameters: withBookmarkParameter(route.parameters),
    middleware: [...middleware, ...own, ...(takesNoQuery ? [refuseQueryParameters] : [])],
    // A replay of an Idempotency-Key operation's success says so in a header; its twin still in
    // flight is a 409, declared here unless the operation describes its own 409s.
    responses: withHeaders(
      {
        ...pickErrors(Boolean(route.request?.body)),
        ...(own.includes(idempotent) ? { 409: inFlight } : {}),
        ...(route.method === "get" ? {} : { 503: institutionMovingResponse }),
        ...route.responses,
      },
      own.includes(idempotent),
    ),
    ...(ability ? { "x-required-ability": ability } : {}),
  }) as unknown as R;
}

/**
 * An authenticated operation refuses query parameters it does not know (422, each one named), the
 * way it refuses unknown body fields: a misspelt filter (`course_id` for `course`) would otherwise be
 * dropped silently and answer the unfiltered list with 200. Public operations keep ignoring them,
 * so that `?utm_source=…` works and cannot split their cache.
 */
function strictQuery<Q extends RouteConfig["request"]>(request: Q): Q {
  if (!request?.query || !(request.query instanceof z.ZodObject)) return request;
  return { ...request, query: request.query.strict() };
}

/** `strictQuery` for an operation that declares no query parameters: any parameter is unknown. */
const refuseQueryParameters: MiddlewareHandler = async (c, next) => {
  // Hono's own parser (as the validator's), run only when the URL has a query at all.
  if (c.req.url.includes("?")) {
    const names = Object.keys(c.req.queries());
    if (names.length > 0) throw validationError(unrecognisedFields(names));
  }
  await next();
};

/**
 * A public operation: no token, limited per client IP. `countedPerIp`: the limit is a RateLimiter
 * object's exact count (sign-in), whose responses carry the rate-limit headers as authenticated
 * ones do; the public reads' edge limiter sends none.
 */
export function publicRoute<const R extends RouteConfig>(
  route: R,
  options: { countedPerIp?: boolean } = {},
): R {
  const { 401: _401, 403: _403, ...rest } = pickErrors(Boolean(route.request?.body));
  const responses = { ...rest, ...route.responses };
  // A public request naming an institution in its path runs in that institution's database.
  const own = route.middleware ? [route.middleware].flat() : [];
  const middleware = namesInstitution(route.path) ? [inInstitutionOfPath, ...own] : own;
  return createRoute({
    ...route,
    ...(middleware.length > 0 ? { middleware } : {}),
    security: [],
    parameters: withBookmarkParameter(route.parameters),
    responses: options.countedPerIp ? withHeaders(responses) : withBookmarkHeader(responses),
  }) as unknown as R;
}

/**
 * The middleware an operation runs before its handler (`tokenRoute`'s and `publicRoute`'s), for an
 * operation served by `app.get` beside `registerPath` instead of `app.openapi` (a body that is not
 * JSON): `app.get(path, ...operationMiddleware(route), handler)`.
 */
export function operationMiddleware(route: RouteConfig): MiddlewareHandler<AppEnv>[] {
  return (route.middleware ? [route.middleware].flat() : []) as MiddlewareHandler<AppEnv>[];
}

function pickErrors(hasBody: boolean): Responses {
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

/** A JSON request body that is required and rejects unknown fields (the schema must be strict). */
export function jsonBody<T extends z.ZodType>(schema: T, description?: string) {
  return { required: true, description, content: { "application/json": { schema } } } as const;
}

/** A body the client may leave out entirely; then every field takes its default. */
export function optionalJsonBody<T extends z.ZodType>(schema: T, description?: string) {
  return { required: false, description, content: { "application/json": { schema } } } as const;
}

export function jsonResponse<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } } as const;
}

type Definition = OpenAPIRegistry["definitions"][number];

/**
 * The registries' definitions as the document shows them. A route's `middleware` and `hide` are
 * Hono's business: `app.openapi` drops them, but a route handed to `registerPath` alone would carry
 * them into the document. A webhook is a request this API sends, so no security scheme of ours
 * applies to it: `security: []` says so, as every public operation does.
 */
export function documentedDefinitions(registries: readonly OpenAPIRegistry[]): Definition[] {
  return registries.flatMap((registry) =>
    registry.definitions.map((definition): Definition => {
      if (definition.type === "route") {
        const { middleware: _middleware, hide: _hide, ...route } = definition.route as RouteConfig;
        return { ...definition, route };
      }
      if (definition.type === "webhook") {
        return { ...definition, webhook: { security: [], ...definition.webhook } };
      }
      return definition;
    }),
  );
}
