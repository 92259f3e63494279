/** The response headers a script on another origin may read from a public catalogue answer. */
export const PUBLIC_EXPOSED_HEADERS = [
  "ETag",
  "Age",
  "Retry-After",
  "X-Request-Id",
  "X-Cache",
  "X-D1-Bookmark",
] as const;

/**
 * On every public catalogue response, errors included: readable from any origin, no credentials
 * involved. The same values `hono/cors` sends on the app's path (index.ts), for the answers early.ts
 * gives before the app runs.
 */
export const PUBLIC_CORS_HEADERS: readonly (readonly [string, string])[] = [
  ["Access-Control-Allow-Origin", "*"],
  ["Access-Control-Expose-Headers", PUBLIC_EXPOSED_HEADERS.join(",")],
];
