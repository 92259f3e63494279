// Bench-only wrappers around the Lingua worker, so that the production bundle carries none of
// their code. `npm run bench` loads a wrapped copy as a worker of two modules: a small entry
// (benchEntrySource) that imports the wrangler bundle (./index.js) and this file, wraps its default
// export and re-exports its Durable Object classes. test/platform/d1-meter.test.ts and
// test/catalog/edge-cache.test.ts run the same wrappers around src/index.ts.
import { AsyncLocalStorage } from "node:async_hooks";

// ---------------------------------------------------------------------------------------------
// D1 meter

/*
 * Every D1 statement run in an API request's async context is counted, and its `meta.rows_read` and
 * `meta.rows_written` summed, into that request's meter; the response carries `X-D1-Queries`,
 * `X-D1-Rows-Read` and `X-D1-Rows-Written`. D1's `first()` and `raw()` return no meta, so `first()`
 * runs as `all()`, and a SELECT's `raw()` runs once as `all()` for its meta and once as `raw()` for
 * its rows (the second run is not counted; other statements' `raw()` run once and count in
 * `X-D1-Unmetered`). Statements a Durable Object runs (e.g. the token gate's record load) use the
 * object's own bindings and are not counted; nor is work left to `waitUntil` after the answer.
 */
const meters = new AsyncLocalStorage();

function add(meta) {
  const meter = meters.getStore();
  if (!meter) return;
  meter.queries += 1;
  meter.rowsRead += meta?.rows_read ?? 0;
  meter.rowsWritten += meta?.rows_written ?? 0;
}

const INNER = Symbol("inner");

class MeteredStatement {
  constructor(inner, sql) {
    this[INNER] = inner;
    this.sql = sql;
  }

  bind(...values) {
    return new MeteredStatement(this[INNER].bind(...values), this.sql);
  }

  async run() {
    const result = await this[INNER].run();
    add(result.meta);
    return result;
  }

  async all() {
    const result = await this[INNER].all();
    add(result.meta);
    return result;
  }

  async first(column) {
    const result = await this[INNER].all();
    add(result.meta);
    const row = result.results[0] ?? null;
    return column === undefined ? row : (row?.[column] ?? null);
  }

  async raw(options) {
    if (/^\s*(select|with)\b/i.test(this.sql)) add((await this[INNER].all()).meta);
    else {
      const meter = meters.getStore();
      if (meter) meter.unmetered += 1;
    }
    return this[INNER].raw(options);
  }
}

/** A binding or a D1 session (the service context runs every query in one) with every statement metered. */
function metered(d1) {
  return {
    prepare: (query) => new MeteredStatement(d1.prepare(query), query),
    batch: async (statements) => {
      const results = await d1.batch(statements.map((s) => (s instanceof MeteredStatement ? s[INNER] : s)));
      for (const r of results) add(r.meta);
      return results;
    },
  };
}

/** The binding with every statement metered, its sessions' statements too. */
export function meteredD1(d1) {
  return {
    ...metered(d1),
    exec: (query) => d1.exec(query),
    dump: () => d1.dump(),
    withSession: (...args) => {
      const session = d1.withSession(...args);
      return { ...metered(session), getBookmark: () => session.getBookmark() };
    },
  };
}

/** One metered copy of each `env` (the same object on every request of an isolate). */
const meteredEnvs = new WeakMap();

function meteredEnv(env) {
  let copy = meteredEnvs.get(env);
  if (!copy) {
    copy = { ...env, DB: meteredD1(env.DB) };
    meteredEnvs.set(env, copy);
  }
  return copy;
}

/** `worker` with its API requests metered (paths /api and /api/…); anything else passes through. */
export function withD1Meter(worker) {
  return {
    ...worker,
    async fetch(request, env, ctx) {
      const { pathname } = new URL(request.url);
      if (!(pathname.startsWith("/api/") || pathname === "/api")) return worker.fetch(request, env, ctx);
      const meter = { queries: 0, rowsRead: 0, rowsWritten: 0, unmetered: 0 };
      const answer = await meters.run(meter, () => worker.fetch(request, meteredEnv(env), ctx));
      const response = new Response(answer.body, answer);
      response.headers.set("X-D1-Queries", String(meter.queries));
      response.headers.set("X-D1-Rows-Read", String(meter.rowsRead));
      response.headers.set("X-D1-Rows-Written", String(meter.rowsWritten));
      if (meter.unmetered) response.headers.set("X-D1-Unmetered", String(meter.unmetered));
      return response;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Every public page a miss

/**
 * `worker` with every request sent under an origin of its own (`r<n>.miss.bench`), so that no
 * copy of a public catalogue page — in the isolate's memory or the Cache API, both keyed by origin,
 * path and known parameters — is ever found again: each request runs the whole production miss
 * path (D1 read, JSON, ETag, storing the copy). Run it with Miniflare's Cache API off, so that the
 * copies it stores cost no more than a real miss's. Links in the bodies name that origin.
 */
export function withEveryPageAMiss(worker) {
  let requests = 0;
  return {
    ...worker,
    fetch(request, env, ctx) {
      requests += 1;
      const url = new URL(request.url);
      url.hostname = `r${requests}.miss.bench`;
      return worker.fetch(new Request(url, request), env, ctx);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The entry module

export const WRAPPERS = { meter: "withD1Meter", miss: "withEveryPageAMiss" };

/** The entry module of a wrapped copy: `bundle` is the wrangler bundle's file name beside it. */
export function benchEntrySource(wrapper, bundle = "./index.js", wrappers = "./worker-wrappers.mjs") {
  const name = WRAPPERS[wrapper];
  if (!name) throw new Error(`no bench wrapper ${wrapper}`);
  return [
    `import worker from ${JSON.stringify(bundle)};`,
    `import { ${name} } from ${JSON.stringify(wrappers)};`,
    `export * from ${JSON.stringify(bundle)};`,
    `export default ${name}(worker);`,
    "",
  ].join("\n");
}
