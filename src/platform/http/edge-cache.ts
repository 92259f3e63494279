import type { Context } from "hono";
import type { AppEnv } from "../../env";

/**
 * Public, cacheable GET responses, served for the edge:
 * - `Cache-Control` for browsers and shared caches, a strong `ETag` (quoted hex SHA-256 of the body),
 *   `304 Not Modified` on a matching `If-None-Match`;
 * - a copy in the Workers Cache API (`caches.default`) of the colo that served it, so that a repeat
 *   request is answered without touching D1. The stored copy lives 60 s whatever the public header
 *   says, so that no copy outlives the public `max-age` after a change; deletions (`purgeEdgeCache`)
 *   only reach the colo that runs them, the others converge within those 60 s.
 *
 * Nothing is built at module load.
 */
export const PUBLIC_CACHE_CONTROL = "public, max-age=60, s-maxage=300, stale-while-revalidate=600";
export const EDGE_TTL_SECONDS = 60;
const STORED_CACHE_CONTROL = `public, max-age=${EDGE_TTL_SECONDS}`;
/** When the stored copy was made (ms since the epoch); turned into `Age` and never sent out. */
const STORED_AT = "X-Lingua-Stored-At";

/**
 * The cache key: origin + path + the listed query parameters that the request carries, sorted by
 * name (first value of each). Unknown parameters are left out, so `?utm_source=…` cannot split the
 * cache, and parameter order does not matter.
 */
export function normalisedUrl(requestUrl: string, knownParams: readonly string[]): string {
  const url = new URL(requestUrl);
  const kept = new URLSearchParams();
  for (const name of [...knownParams].sort()) {
    const value = url.searchParams.get(name);
    if (value !== null) kept.set(name, value);
  }
  const query = kept.toString();
  return `${url.origin}${url.pathname}${query ? `?${query}` : ""}`;
}

export async function strongEtag(body: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(body)));
  let hex = "";
  for (const byte of digest) hex += byte.toString(16).padStart(2, "0");
  return `"${hex}"`;
}

/** RFC 9110 §13.1.2: `*` or a list of entity tags, compared weakly. */
export function ifNoneMatchHits(header: string | undefined | null, etag: string): boolean {
  if (!header) return false;
  const trimmed = header.trim();
  if (trimmed === "*") return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, "");
  const wanted = opaque(etag);
  return trimmed.split(",").some((candidate) => opaque(candidate) === wanted);
}

function edgeCache(): Cache | null {
  // Absent outside the Workers runtime; present but a no-op on *.workers.dev.
  return typeof caches === "undefined" ? null : caches.default;
}

function answer(c: Context<AppEnv>, body: ReadableStream | string | null, etag: string, state: "HIT" | "MISS", ageSeconds: number): Response {
  const headers = new Headers({ ETag: etag, "Cache-Control": PUBLIC_CACHE_CONTROL, "X-Cache": state });
  if (ageSeconds > 0) headers.set("Age", String(ageSeconds));
  if (ifNoneMatchHits(c.req.header("If-None-Match"), etag)) {
    if (body instanceof ReadableStream) void body.cancel().catch(() => undefined);
    return new Response(null, { status: 304, headers });
  }
  headers.set("Content-Type", "application/json");
  return new Response(body, { status: 200, headers });
}

/**
 * Answers from the colo's cache when it holds `key` (no other I/O at all), otherwise runs `produce`
 * (which may throw an ApiError, e.g. 404, which is not cached), stores the JSON it returns for 60 s
 * and answers it. Both paths honour `If-None-Match`.
 */
export async function serveFromEdgeCache(c: Context<AppEnv>, key: string, produce: () => Promise<unknown>): Promise<Response> {
  const cache = edgeCache();
  // A cache failure must not fail the request: it is then a miss.
  const hit = await cache?.match(key).catch(() => undefined);
  if (hit) {
    const etag = hit.headers.get("ETag");
    const storedAt = Number(hit.headers.get(STORED_AT));
    if (etag) {
      const age = Number.isFinite(storedAt) && storedAt > 0 ? Math.max(0, Math.floor((Date.now() - storedAt) / 1000)) : 0;
      return answer(c, hit.body, etag, "HIT", Math.min(age, EDGE_TTL_SECONDS));
    }
  }

  const body = JSON.stringify(await produce());
  const etag = await strongEtag(body);
  if (cache) {
    const stored = new Response(body, {
      headers: { "Content-Type": "application/json", ETag: etag, "Cache-Control": STORED_CACHE_CONTROL, [STORED_AT]: String(Date.now()) },
    });
    c.executionCtx.waitUntil(cache.put(key, stored).catch(() => undefined));
  }
  return answer(c, body, etag, "MISS", 0);
}

/** Deletes cached copies in this colo; the rest expire within `EDGE_TTL_SECONDS`. */
export async function purgeEdgeCache(keys: readonly string[]): Promise<void> {
  const cache = edgeCache();
  if (!cache) return;
  await Promise.all(keys.map((key) => cache.delete(key).catch(() => false)));
}
