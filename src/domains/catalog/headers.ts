/** On every public catalogue response, errors included: readable from any origin, no credentials involved. */
export const PUBLIC_CORS_HEADERS: readonly (readonly [string, string])[] = [
  ["Access-Control-Allow-Origin", "*"],
  ["Access-Control-Expose-Headers", "ETag, Age, Retry-After, X-Request-Id, X-Cache"],
];
