import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { createRoute, OpenAPIHono, type RouteConfig, z } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import type { Ability } from "./auth/abilities";
import { authenticate, requireAbility } from "./auth/middleware";
import { fieldErrorsFromZod, unrecognisedFields, validationError } from "./errors";
import { provideContext } from "./http/context-middleware";
import { applyApiConventions } from "./http/conventions";
import { idempotent } from "./http/idempotency";
import { inInstitutionOfPath, namesInstitution } from "./http/institution-path";
import { withBookmarkHeader, withBookmarkParameter, withHeaders } from "./openapi-headers";
import { errorResponses, institutionMovingResponse, pickErrors } from "./openapi-problems";

/**
 * Documented operations: the app they are registered on, `tokenRoute` and `publicRoute` (auth, rate
 * limit and the conventions' responses around a route), request bodies and JSON responses, and the
 * definitions the document shows. The problem responses they declare are in `openapi-problems.ts`,
 * the headers in `openapi-headers.ts`.
 */

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

const inFlight = {
  ...errorResponses[409],
  description: "`idempotency_in_flight`: a request with this Idempotency-Key is still in flight.",
};

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
