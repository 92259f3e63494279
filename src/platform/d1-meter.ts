import { AsyncLocalStorage } from "node:async_hooks";
import type { Context, Next } from "hono";
import type { AppEnv } from "../env";

/**
 * Opt-in D1 metering for benchmarks: with the var `D1_METER` = "true" (never set in wrangler.toml),
 * every D1 statement run in a request's async context is counted, and its `meta.rows_read` and
 * `meta.rows_written` summed, into that request's accumulator; the response carries `X-D1-Queries`,
 * `X-D1-Rows-Read` and `X-D1-Rows-Written`. Off (the default), nothing is wrapped: the middleware
 * compares one string and `database()` reads one boolean.
 *
 * D1's `first()` and `raw()` return no meta, so while metering `first()` runs as `all()`, and a
 * SELECT's `raw()` runs once as `all()` for its meta and once as `raw()` for its rows (the second run
 * is not counted; other statements' `raw()` run once and count in `X-D1-Unmetered`). Statements a
 * Durable Object runs (e.g. the token gate's record load) are outside the request's context and not
 * counted.
 */
interface Meter {
  queries: number;
  rowsRead: number;
  rowsWritten: number;
  unmetered: number;
}

const store = new AsyncLocalStorage<Meter>();
let enabled = false;

/** True once a request has run with D1_METER = "true" in this isolate. */
export function isMetering(): boolean {
  return enabled;
}

function add(meta: { rows_read?: number; rows_written?: number } | undefined) {
  const meter = store.getStore();
  if (!meter) return;
  meter.queries += 1;
  meter.rowsRead += meta?.rows_read ?? 0;
  meter.rowsWritten += meta?.rows_written ?? 0;
}

const INNER = Symbol("inner");

class MeteredStatement {
  [INNER]: D1PreparedStatement;
  constructor(
    inner: D1PreparedStatement,
    private readonly sql: string,
  ) {
    this[INNER] = inner;
  }

  bind(...values: unknown[]) {
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

  async first(column?: string) {
    const result = await this[INNER].all<Record<string, unknown>>();
    add(result.meta);
    const row = result.results[0] ?? null;
    return column === undefined ? row : (row?.[column] ?? null);
  }

  async raw(options?: { columnNames?: boolean }) {
    if (/^\s*(select|with)\b/i.test(this.sql)) add((await this[INNER].all()).meta);
    else {
      const meter = store.getStore();
      if (meter) meter.unmetered += 1;
    }
    return this[INNER].raw(options as { columnNames: true });
  }
}

const wrapped = new WeakMap<D1Database, D1Database>();

/** The binding with every statement metered (one wrapper per binding). */
export function meteredD1(d1: D1Database): D1Database {
  let meteredDb = wrapped.get(d1);
  if (!meteredDb) {
    meteredDb = {
      prepare: (query: string) => new MeteredStatement(d1.prepare(query), query),
      batch: async (statements: unknown[]) => {
        const results = await d1.batch(
          statements.map((s) => (s instanceof MeteredStatement ? s[INNER] : (s as D1PreparedStatement))),
        );
        for (const r of results) add(r.meta);
        return results;
      },
      exec: (query: string) => d1.exec(query),
      dump: () => (d1 as unknown as { dump(): Promise<ArrayBuffer> }).dump(),
      withSession: (...args: unknown[]) =>
        (d1 as unknown as { withSession(...a: unknown[]): unknown }).withSession(...args),
    } as unknown as D1Database;
    wrapped.set(d1, meteredDb);
  }
  return meteredDb;
}

/** Whether this deployment meters D1 (benchmarks only). `env` is undefined when a test calls the app without bindings. */
export function d1MeterOn(env: object | undefined): boolean {
  // D1_METER is not one of the Env's declared bindings: it is set by the benchmark's Miniflare only.
  return (env as { D1_METER?: string } | undefined)?.D1_METER === "true";
}

/**
 * Runs `next` metered when env.D1_METER is "true" and the path is the API's; otherwise it is one
 * comparison and next(). Called by the middleware that wraps every request rather than being one
 * more layer of its own.
 */
export async function nextWithD1Meter(c: Context<AppEnv>, next: Next): Promise<void> {
  if (!d1MeterOn(c.env) || !(c.req.path.startsWith("/api/") || c.req.path === "/api")) return next();
  enabled = true;
  const meter: Meter = { queries: 0, rowsRead: 0, rowsWritten: 0, unmetered: 0 };
  await store.run(meter, next);
  c.res.headers.set("X-D1-Queries", String(meter.queries));
  c.res.headers.set("X-D1-Rows-Read", String(meter.rowsRead));
  c.res.headers.set("X-D1-Rows-Written", String(meter.rowsWritten));
  if (meter.unmetered) c.res.headers.set("X-D1-Unmetered", String(meter.unmetered));
}
