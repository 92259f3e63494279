import type { Env } from "../../env";
import type { Principal } from "../auth/principal";
import { type Config, config } from "../config";
import { type Database, database } from "../db";
import { clockNow } from "./clock";
import { type D1SessionStart, InvocationSession, SESSION } from "./d1-session";

export { observeBookmark, sessionBookmark, tolerateStaleReads } from "./d1-session";

/**
 * Everything a service needs from the invocation it runs in, built once per request (by
 * `provideContext`, platform/http/context-middleware.ts) or once per queue or cron invocation (by
 * `invocationContext`). Every service has the shape `verb(ctx, input)`; none reaches for `env`, a
 * database client or `Date.now()` on its own. The context is where a request's database is chosen,
 * and it owns the invocation's D1 session (`withSession`, platform/service/d1-session.ts): `db` and
 * `d1` both run in it, so an invocation reads its own writes; `sessionBookmark(ctx)` is where it got
 * to (the `X-D1-Bookmark` of a response).
 */
export interface ServiceContext {
  readonly env: Env;
  /** The invocation's database, through drizzle, in the invocation's D1 session. */
  readonly db: Database;
  /**
   * The same database and session in D1's own shape, for the raw statements of a domain's `sql.ts`
   * and for batches of bound statements (`commit`). Chosen here, with `db`, never read from `env.DB`.
   * `prepare` and `batch` run in the session; `exec` and `dump`, which a session cannot run, throw.
   */
  readonly d1: D1Database;
  readonly config: Config;
  /** The request's `X-Request-Id`, or the invocation's id for queue and cron work. */
  readonly requestId: string;
  /** Milliseconds since the epoch; injectable (platform/service/clock.ts). */
  now(): number;
  /** Work that may finish after the response (or the queue batch) without holding it up. */
  waitUntil(promise: Promise<unknown>): void;
}

/** The context of a request a token authenticated: who is calling. */
export interface PrincipalContext extends ServiceContext {
  readonly principal: Principal;
}

export interface InvocationParts {
  env: Env;
  requestId: string;
  waitUntil: (promise: Promise<unknown>) => void;
  /** The invocation's clock; the injectable clock by default (a cron run passes its scheduled time). */
  now?: () => number;
  /**
   * Where the invocation's D1 session starts: `first-primary` by default (the primary's latest
   * state: queue consumers, sweeps, the dispatcher, Durable Objects and requests without a
   * bookmark), `first-unconstrained` (any replica), or a client's bookmark (a replica at least as
   * recent as it).
   */
  session?: D1SessionStart;
}

/** The context of one invocation: a request, a queue batch or a cron run. */
export function invocationContext({
  env,
  requestId,
  waitUntil,
  now = clockNow,
  session = "first-primary",
}: InvocationParts): ServiceContext {
  // Opened on the first query: a request that reads nothing (a cached page) never touches the binding.
  const d1Session = new InvocationSession(() => env.DB, session);
  let db: Database | undefined;
  return {
    env,
    d1: d1Session.database,
    // On first use: a route that reads none of them (liveness) needs neither drizzle nor valid settings.
    get db() {
      db ??= database(d1Session.database);
      return db;
    },
    get config() {
      return config(env);
    },
    requestId,
    now,
    waitUntil,
    [SESSION]: d1Session,
  } as ServiceContext;
}

/** The same invocation, with the principal a token resolved to. */
export function withPrincipal(ctx: ServiceContext, principal: Principal): PrincipalContext {
  // Not a spread: it would read (and so parse) the lazy `config` once per request.
  return Object.assign(Object.create(ctx) as ServiceContext, { principal });
}

let invocationCounter = 0;
/** An id for queue and cron invocations, which carry no `X-Request-Id`. */
export function newInvocationId(kind: "queue" | "cron"): string {
  invocationCounter += 1;
  return `${kind}_${Date.now().toString(36)}${invocationCounter.toString(36).padStart(6, "0")}`;
}

/** The context of a queue or cron invocation of the worker's `ExecutionContext`. */
export function backgroundContext(
  env: Env,
  execution: Pick<ExecutionContext, "waitUntil">,
  kind: "queue" | "cron",
  now?: () => number,
): ServiceContext {
  return invocationContext({
    env,
    requestId: newInvocationId(kind),
    waitUntil: (promise) => execution.waitUntil(promise),
    ...(now ? { now } : {}),
  });
}
