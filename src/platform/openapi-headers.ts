import type { RouteConfig } from "@hono/zod-openapi";
import { BOOKMARK_HEADER } from "./http/context-middleware";
import { REPLAYED_HEADER_DOC } from "./http/idempotency";

/**
 * The headers the OpenAPI document shows on every documented operation: the `X-D1-Bookmark`
 * parameter and response header, the rate-limit headers of a counted operation, and the
 * `Idempotent-Replayed` header of a replayed success.
 */

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

export function withBookmarkParameter(parameters: RouteConfig["parameters"]): Parameters {
  return [...(parameters ?? []), bookmarkParameter] as Parameters;
}

export function withBookmarkHeader(responses: Responses): Responses {
  const out: Responses = {};
  for (const [status, response] of Object.entries(responses)) {
    out[status] =
      "$ref" in response
        ? response
        : { ...response, headers: { ...bookmarkHeaderDocs, ...response.headers } };
  }
  return out;
}

export function withHeaders(responses: Responses, replayable = false): Responses {
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
