import type { Env } from "../../env";
import type { Principal } from "../auth/principal";
import { type Config, config } from "../config";
import { type Database, database } from "../db";
import { clockNow } from "./clock";
import { type D1SessionStart, InvocationSession, SESSION } from "./d1-session";
import { type DatabaseBinding, databaseBinding, databaseBindings, FIRST_DATABASE } from "./databases";

export { observeBookmark, sessionBookmark, startElsewhere, tolerateStaleReads } from "./d1-session";

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
  /**
   * Which database `db` and `d1` are (design/multi-database.md): `DB` until the invocation knows
   * its institution, then that institution's (`useDatabase`). Queue messages sent by the invocation
   * carry it, so their consumers run there too.
   */
  readonly database: DatabaseBinding;
  /**
   * The first database, `DB`: the directory of which institution lives where, and the keys that find
   * an institution before anything else names it. The same session as `db` while `database` is `DB`.
   */
  readonly home: { readonly db: Database; readonly d1: D1Database };
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
  /** The database the invocation starts in: `DB` by default; a queue message's or a Durable Object call's own. */
  database?: DatabaseBinding;
}

/** The context of one invocation: a request, a queue batch or a cron run. */
export function invocationContext({
  env,
  requestId,
  waitUntil,
  now = clockNow,
  session = "first-primary",
  database: name = FIRST_DATABASE,
}: InvocationParts): ServiceContext {
  // Opened on the first query: a request that reads nothing (a cached page) never touches the binding.
  const d1Session = new InvocationSession(() => databaseBinding(env, name), session, name);
  let db: Database | undefined;
  let home: { db: Database; d1: D1Database } | undefined;
  return {
    env,
    d1: d1Session.database,
    // On first use: a route that reads none of them (liveness) needs neither drizzle nor valid settings.
    get db() {
      db ??= database(d1Session.database);
      return db;
    },
    get database() {
      return d1Session.name as DatabaseBinding;
    },
    get home() {
      if (d1Session.name === FIRST_DATABASE) return { db: this.db, d1: this.d1 };
      // The directory is read at the primary: a key written by the request before must be found.
      if (!home) {
        const homeSession = new InvocationSession(
          () => databaseBinding(env, FIRST_DATABASE),
          "first-primary",
        );
        home = { d1: homeSession.database, db: database(homeSession.database) };
      }
      return home;
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

/**
 * Moves the invocation to `name`'s database (its institution lives there): every later query of
 * `db` and `d1` runs there, in a session of its own; `home` stays `DB`. A no-op when already there.
 */
export function useDatabase(ctx: ServiceContext, name: DatabaseBinding): void {
  const session = (ctx as { [SESSION]?: InvocationSession })[SESSION];
  if (!session) throw new Error("useDatabase on a context not built by invocationContext");
  session.moveTo(name, () => databaseBinding(ctx.env, name));
}

/**
 * Every database of the deployment, for the platform-wide reads that span them (the platform stats):
 * the invocation's own in its session, each other one in a session of its own at the primary.
 */
export function everyDatabase(
  ctx: ServiceContext,
): { name: DatabaseBinding; db: Database; d1: D1Database }[] {
  return databaseBindings(ctx.env).map((name) => {
    if (name === ctx.database) return { name, db: ctx.db, d1: ctx.d1 };
    const session = new InvocationSession(() => databaseBinding(ctx.env, name), "first-primary", name);
    return { name, db: database(session.database), d1: session.database };
  });
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
  databaseName: DatabaseBinding = FIRST_DATABASE,
): ServiceContext {
  return invocationContext({
    env,
    requestId: newInvocationId(kind),
    waitUntil: (promise) => execution.waitUntil(promise),
    database: databaseName,
    ...(now ? { now } : {}),
  });
}
