import type { Context } from "hono";
import type { AppEnv } from "../../env";
import { sessionBookmark } from "../service/d1-session";

/**
 * Public, cacheable GET responses, served for the edge:
 * - `Cache-Control` for browsers and shared caches, a strong `ETag` (quoted hex SHA-256 of the body),
 *   `304 Not Modified` on a matching `If-None-Match`;
 * - a copy in the Workers Cache API (`caches.default`) of the colo that served it, so that a repeat
 *   request is answered without touching D1. The stored copy lives 60 s whatever the public header
 *   says, so that no copy outlives the public `max-age` after a change; deletions (`purgeEdgeCache`)
 *   only reach the colo that runs them, the others converge within those 60 s;
 * - in front of it, a few seconds' copy in the isolate's memory, because a Cache API lookup is I/O
 *   that costs more than the rest of a hit. A memory copy never outlives the stored copy it came
 *   from (so the 60 s bound holds), is dropped by `purgeEdgeCache` in the isolate that purges, and
 *   lives `MEMORY_TTL_MS` at most in every other isolate.
 * A copy keeps the D1 bookmark of the read that made it, answered in `X-D1-Bookmark` with it: the
 * position of the state the page shows (docs/design/d1-sessions.md).
 *
 * Nothing is built at module load.
 */
export const PUBLIC_CACHE_CONTROL = "public, max-age=60, s-maxage=300, stale-while-revalidate=600";
export const EDGE_TTL_SECONDS = 60;
const STORED_CACHE_CONTROL = `public, max-age=${EDGE_TTL_SECONDS}`;
/** When the stored copy was made (ms since the epoch); turned into `Age` and never sent out. */
const STORED_AT = "X-Lingua-Stored-At";
/** The D1 bookmark of the read that made a copy (platform/http/context-middleware.ts's header). */
const BOOKMARK = "X-D1-Bookmark";
export const MEMORY_TTL_MS = 5_000;
/** Public pages are a few KiB; this bounds the isolate's copies to a few MiB. */
const MEMORY_MAX_ENTRIES = 256;

export interface MemoryCopy {
  body: string;
  etag: string;
  storedAt: number;
  expiresAt: number;
  /** The D1 bookmark of the read that made the copy, when it has one. */
  bookmark: string | null;
  /**
   * What the early path (the catalogue's early.ts) reuses for every answer of this copy, built at
   * its first use: the body as UTF-8 bytes (the bytes a string body would be encoded to on each
   * request) and the headers that never change, for the `200` and the `304`.
   */
  early?: { bytes: Uint8Array; ok: Headers; notModified: Headers };
}

/**
 * By cache key, and also by the exact URL of a request that was answered with the copy: a repeat of
 * that URL can then be answered before the app parses and validates it again (the same URL always
 * validates the same way; see the catalogue's `answerCachedPageEarly`). Both names share one object, so purging the key
 * (expiresAt = 0) retires every alias at once.
 */
const memory = new Map<string, MemoryCopy>();

function newCopy(body: string, etag: string, storedAt: number, bookmark: string | null): MemoryCopy {
  return {
    body,
    etag,
    storedAt,
    bookmark,
    expiresAt: Math.min(storedAt + EDGE_TTL_SECONDS * 1000, Date.now() + MEMORY_TTL_MS),
  };
}

function remember(key: string, requestUrl: string, copy: MemoryCopy): void {
  for (const name of key === requestUrl ? [key] : [key, requestUrl]) {
    // Insertion order is age order: the first name is the oldest copy.
    memory.delete(name);
    const oldest = memory.keys().next();
    if (memory.size >= MEMORY_MAX_ENTRIES && !oldest.done) memory.delete(oldest.value);
    memory.set(name, copy);
  }
}

/** The copy this isolate holds under a cache key or a request's exact URL (see `memory`), if any. */
export function recalled(name: string): MemoryCopy | undefined {
  const copy = memory.get(name);
  if (copy && copy.expiresAt <= Date.now()) {
    memory.delete(name);
    return undefined;
  }
  return copy;
}

export function ageSeconds(storedAt: number): number {
  const age =
    Number.isFinite(storedAt) && storedAt > 0 ? Math.max(0, Math.floor((Date.now() - storedAt) / 1000)) : 0;
  return Math.min(age, EDGE_TTL_SECONDS);
}

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

/** A cached page's response; `304` when `If-None-Match` matches. */
function answer(
  ifNoneMatch: string | null | undefined,
  body: string,
  etag: string,
  state: "HIT" | "MISS",
  age: number,
  bookmark: string | null,
): Response {
  const headers: [string, string][] = [
    ["ETag", etag],
    ["Cache-Control", PUBLIC_CACHE_CONTROL],
    ["X-Cache", state],
  ];
  if (age > 0) headers.push(["Age", String(age)]);
  if (bookmark) headers.push([BOOKMARK, bookmark]);
  if (ifNoneMatchHits(ifNoneMatch, etag)) return new Response(null, { status: 304, headers });
  headers.push(["Content-Type", "application/json"]);
  return new Response(body, { status: 200, headers });
}

/**
 * Answers from the isolate's memory or the colo's cache when either holds `key` (no other I/O at
 * all), otherwise runs `produce` (which may throw an ApiError, e.g. 404, which is not cached),
 * stores the JSON it returns for 60 s and answers it. Every path honours `If-None-Match`.
 */
export async function serveFromEdgeCache(
  c: Context<AppEnv>,
  key: string,
  produce: () => Promise<unknown>,
): Promise<Response> {
  const copy = recalled(key);
  if (copy) {
    remember(key, c.req.url, copy);
    return answer(
      c.req.header("If-None-Match"),
      copy.body,
      copy.etag,
      "HIT",
      ageSeconds(copy.storedAt),
      copy.bookmark,
    );
  }

  const cache = edgeCache();
  // A cache failure must not fail the request: it is then a miss.
  const hit = await cache?.match(key).catch(() => undefined);
  if (hit) {
    const etag = hit.headers.get("ETag");
    const storedAt = Number(hit.headers.get(STORED_AT));
    if (etag && Number.isFinite(storedAt)) {
      const body = await hit.text();
      const bookmark = hit.headers.get(BOOKMARK);
      remember(key, c.req.url, newCopy(body, etag, storedAt, bookmark));
      return answer(c.req.header("If-None-Match"), body, etag, "HIT", ageSeconds(storedAt), bookmark);
    }
    void hit.body?.cancel().catch(() => undefined);
  }

  const body = JSON.stringify(await produce());
  const etag = await strongEtag(body);
  const storedAt = Date.now();
  const bookmark = sessionBookmark(c.get("ctx"));
  remember(key, c.req.url, newCopy(body, etag, storedAt, bookmark));
  if (cache) {
    const stored = new Response(body, {
      headers: {
        "Content-Type": "application/json",
        ETag: etag,
        "Cache-Control": STORED_CACHE_CONTROL,
        [STORED_AT]: String(storedAt),
        ...(bookmark ? { [BOOKMARK]: bookmark } : {}),
      },
    });
    c.executionCtx.waitUntil(cache.put(key, stored).catch(() => undefined));
  }
  return answer(c.req.header("If-None-Match"), body, etag, "MISS", 0, bookmark);
}

/** Deletes cached copies in this isolate and this colo; the rest expire within `EDGE_TTL_SECONDS`. */
export async function purgeEdgeCache(keys: readonly string[]): Promise<void> {
  for (const key of keys) {
    const copy = memory.get(key);
    if (copy) copy.expiresAt = 0;
    memory.delete(key);
  }
  const cache = edgeCache();
  if (!cache) return;
  await Promise.all(keys.map((key) => cache.delete(key).catch(() => false)));
}
