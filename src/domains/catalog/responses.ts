import { PUBLIC_CACHE_CONTROL } from "../../platform/http/edge-cache";
import { ProblemSchema } from "../../platform/openapi-problems";

const cacheHeaders = {
  "Cache-Control": {
    description: `Always \`${PUBLIC_CACHE_CONTROL}\`.`,
    schema: { type: "string" as const },
  },
  ETag: {
    description: "Strong validator: the quoted hex SHA-256 of the body.",
    schema: { type: "string" as const },
  },
  Age: {
    description: "Seconds the answer spent in the edge cache (absent when fresh from the database).",
    schema: { type: "integer" as const },
  },
  "X-Cache": {
    description: "`HIT` when answered from the edge cache, `MISS` otherwise.",
    schema: { type: "string" as const },
  },
  "Access-Control-Allow-Origin": {
    description: "`*`: readable from any web page.",
    schema: { type: "string" as const },
  },
};

/** A cacheable public answer: 200 with the validators, or 304 without a body. */
export function cacheableResponses<T extends { description: string; content: Record<string, unknown> }>(
  ok: T,
) {
  return {
    200: { ...ok, headers: cacheHeaders },
    304: { description: "Not modified: the `If-None-Match` validator still matches.", headers: cacheHeaders },
    429: {
      description: "Too many requests from this address; see `Retry-After` (60).",
      content: { "application/problem+json": { schema: ProblemSchema } },
      headers: { "Retry-After": { description: "Seconds to wait.", schema: { type: "integer" as const } } },
    },
  } as const;
}
