// The "floor" worker of the benchmark: the least a Worker can do for each kind of request, so the
// Lingua routes can be compared with the platform's own cost in the same run on the same machine.
//   /bare  one Response, nothing else
//   /do    one RPC call to a trivial SQLite-backed Durable Object addressed by a fixed name
//   /d1    one D1 point read by primary key
// Plain module worker, no framework, no bundling step.
//
// A floor sends the headers of the Lingua response it stands for, so that a ratio compares the work
// behind a response, not the number of its headers: in workerd under Miniflare every header costs
// microseconds per response (a framework-free worker sending /healthz's seven headers measured 1.22×
// the CPU of one sending a content type alone, and /healthz itself 0.98× that worker; 2026-11-22).
//   /bare  the headers of every Lingua response, as /healthz sends them
//   /do    those and the headers CONVENTIONS.md requires of every authenticated response (rate
//          limits) and its Cache-Control, as GET /api/auth/me sends them
//   /d1    a content type alone: a goal adds it to /do, whose headers stand for the one response
// /bare-plain and /do-plain are the same floors with a content type alone, as before that date; the
// bench reports Lingua against them too, for reference.
import { DurableObject } from "cloudflare:workers";

export class FloorObject extends DurableObject {
  ping() {
    return { ok: true, at: Date.now() };
  }
}

const ROWS = 100;
let seeded = null;

/** Creates and fills the table once per isolate; afterwards this is one settled-promise check. */
function seedOnce(db) {
  seeded ??= (async () => {
    await db.prepare("CREATE TABLE IF NOT EXISTS items (id INTEGER PRIMARY KEY, name TEXT NOT NULL)").run();
    const insert = db.prepare("INSERT OR IGNORE INTO items (id, name) VALUES (?, ?)");
    await db.batch(Array.from({ length: ROWS }, (_, i) => insert.bind(i + 1, `item ${i + 1}`)));
  })().catch((error) => {
    seeded = null;
    throw error;
  });
  return seeded;
}

let next = 0;

/**
 * The fixed headers of every Lingua response: src/platform/http/middleware.ts (SECURITY_HEADERS,
 * DEFAULT_FRAMING_HEADERS). test/system/bench-floor.test.ts holds this copy to them.
 */
export const LINGUA_RESPONSE_HEADERS = [
  ["X-Content-Type-Options", "nosniff"],
  ["Referrer-Policy", "no-referrer"],
  ["Strict-Transport-Security", "max-age=31536000; includeSubDomains"],
  ["Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'"],
  ["X-Frame-Options", "DENY"],
];
/** BENCH_RATE_LIMIT_PER_MINUTE of scripts/bench/seed.mjs (the floor is loaded as one module, without imports). */
const RATE_LIMIT = 1_000_000_000;
/** What an authenticated response adds that does not change from one request to the next. */
const AUTHENTICATED_FIXED_HEADERS = [
  ["X-RateLimit-Limit", String(RATE_LIMIT)],
  ["RateLimit-Policy", `"minute";q=${RATE_LIMIT};w=60`],
  ["Cache-Control", "no-store"],
];

// Cloning a Headers object and setting the values that change is the cheapest way found to send
// these headers: per request at concurrency 16, 259 µs of workerd CPU against 276 for an object
// literal and 337 for an array of pairs (236 for a content type alone; 2026-11-22, 8 rounds of 3 s).
const JSON_TYPE = ["Content-Type", "application/json"];
const PUBLIC_TEMPLATE = new Headers([JSON_TYPE, ...LINGUA_RESPONSE_HEADERS]);
const AUTHENTICATED_TEMPLATE = new Headers([
  JSON_TYPE,
  ...LINGUA_RESPONSE_HEADERS,
  ...AUTHENTICATED_FIXED_HEADERS,
]);
const PLAIN_TEMPLATE = new Headers([JSON_TYPE]);

// Lingua's request id has this shape: a random per-isolate prefix, then a counter.
let requestIdPrefix = "";
let requestCounter = 0;
function newRequestId() {
  requestIdPrefix ||= [...crypto.getRandomValues(new Uint8Array(10))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");
  requestCounter += 1;
  return `req_${requestIdPrefix}${requestCounter.toString(16).padStart(12, "0")}`;
}

/** `headers`: "public" (as /healthz), "authenticated" (as a token route) or "plain" (a content type alone). */
function respond(body, headers) {
  if (headers === "plain") return new Response(body, { headers: PLAIN_TEMPLATE });
  const response = new Response(body, {
    headers: headers === "public" ? PUBLIC_TEMPLATE : AUTHENTICATED_TEMPLATE,
  });
  response.headers.set("X-Request-Id", newRequestId());
  if (headers === "authenticated") {
    // A remaining count and a reset that change per request, as the token's window would.
    const remaining = String(RATE_LIMIT - 1 - (requestCounter % 1_000_000));
    const reset = String(60 - (Math.floor(Date.now() / 1000) % 60));
    response.headers.set("X-RateLimit-Remaining", remaining);
    response.headers.set("X-RateLimit-Reset", reset);
    response.headers.set("RateLimit", `"minute";r=${remaining};t=${reset}`);
  }
  return response;
}

export default {
  async fetch(request, env) {
    const { pathname } = new URL(request.url);
    if (pathname === "/bare" || pathname === "/bare-plain")
      return respond('{"status":"ok"}', pathname === "/bare" ? "public" : "plain");
    if (pathname === "/do" || pathname === "/do-plain") {
      const stub = env.FLOOR_OBJECT.get(env.FLOOR_OBJECT.idFromName("floor"));
      return respond(JSON.stringify(await stub.ping()), pathname === "/do" ? "authenticated" : "plain");
    }
    if (pathname === "/d1") {
      await seedOnce(env.DB);
      next = (next % ROWS) + 1;
      const row = await env.DB.prepare("SELECT id, name FROM items WHERE id = ?").bind(next).first();
      return row ? respond(JSON.stringify(row), "plain") : new Response("missing row", { status: 500 });
    }
    return new Response("not found", { status: 404 });
  },
};
