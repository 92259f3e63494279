import { createExecutionContext, env } from "cloudflare:test";
import { and, asc, eq, notInArray } from "drizzle-orm";
import { expect } from "vitest";
import { outboxEvents, users } from "../../../src/db/schema";
import { database } from "../../../src/platform/db";
import { INTERNAL_EVENT_TYPES } from "../../../src/platform/events";
import { BASE, callJson, fetchWorker } from "../../helpers/api";
import { insertUser, signIn, type TestUser } from "../../helpers/tenants";

/**
 * A recent instant that is still today in UTC (a minute ago, or midnight just past), so tests that read
 * "today" do not fail in the first minutes after midnight.
 */
export function recentToday(agoMs = 60_000, now = Date.now()): number {
  const midnight = now - (now % 86_400_000);
  return Math.max(now - agoMs, midnight);
}

/** One attempt as a client sends it; `at` is the instant it happened. */
export function attempt(
  itemId: string,
  overrides: { score?: number; correct?: boolean; duration_seconds?: number; at?: string | number } = {},
) {
  const { at = recentToday(), ...rest } = overrides;
  return {
    id: crypto.randomUUID(),
    training_item_id: itemId,
    score: 1,
    correct: true,
    duration_seconds: 30,
    occurred_at: new Date(at).toISOString(),
    ...rest,
  };
}

/** Records attempts over HTTP, as a learner's app would, and fails the test unless they are accepted. */
export async function record(token: string, attempts: ReturnType<typeof attempt>[]) {
  const { res, body } = await callJson("/api/progress/attempts", { token, body: { attempts } });
  if (res.status !== 200) throw new Error(`recording failed: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/**
 * A learner of `institutionId` whose time zone is set in D1 before signing in (the principal,
 * including the time zone, is cached with the token).
 */
export async function learnerIn(
  institutionId: string,
  options: { timeZone?: string; optOut?: boolean; name?: string } = {},
): Promise<TestUser> {
  const { id, email } = await insertUser("learner", institutionId);
  await updateUser(id, {
    timeZone: options.timeZone ?? "UTC",
    leaderboardOptOut: options.optOut ?? false,
    ...(options.name !== undefined ? { name: options.name } : {}),
  });
  return { id, email, role: "learner", ...(await signIn(email)) };
}

/** Changes a user's fields (time zone, name, leaderboard opt-out) through drizzle. */
export async function updateUser(
  id: string,
  fields: Partial<Pick<typeof users.$inferInsert, "timeZone" | "name" | "leaderboardOptOut">>,
): Promise<void> {
  await database(env.DB).update(users).set(fields).where(eq(users.id, id));
}

/**
 * A user's public outbox events (of `type`, if given) in the order they were written, payloads
 * parsed; the internal ones (`attempts.recorded`, platform/events.ts) are left out.
 */
export async function outboxOf(userId: string, type?: string) {
  return database(env.DB)
    .select({ id: outboxEvents.id, type: outboxEvents.type, payload: outboxEvents.payload })
    .from(outboxEvents)
    .where(
      and(
        eq(outboxEvents.userId, userId),
        type ? eq(outboxEvents.type, type) : notInArray(outboxEvents.type, Object.keys(INTERNAL_EVENT_TYPES)),
      ),
    )
    .orderBy(asc(outboxEvents.createdAt), asc(outboxEvents.id));
}

export function today(timeZone = "UTC", at = Date.now()): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-GB", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" })
      .formatToParts(new Date(at))
      .map((p) => [p.type, p.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day}`;
}

export function expect422(res: Response, body: any, path: string): void {
  expect(res.status, JSON.stringify(body)).toBe(422);
  expect(body.code).toBe("validation_failed");
  expect(body.errors.map((e: any) => e.path)).toContain(path);
}

// ---------------------------------------------------------------------------------------------
// D1 instrumentation: how many round trips a request makes, and which statements it runs.

interface Statement {
  sql: string;
  params: unknown[];
}

export interface D1Log {
  /** One entry per round trip to D1: a single statement, or a batch. */
  roundTrips: Statement[][];
  /** D1's `meta.rows_read`, summed over the batches (and the `all()`/`run()` calls) of the request. */
  rowsRead: number;
  /** The same, statement by statement. */
  rowsReadByStatement: number[];
}

const origin = new WeakMap<object, { stmt: D1PreparedStatement; sql: string; params: unknown[] }>();

function instrumentD1(real: D1Database, log: D1Log): D1Database {
  const counted = <T extends { meta?: { rows_read?: number } }>(result: T, sql?: string): T => {
    // As in callInstrumented: the token's `last_used_at` write is not part of the read.
    if (sql && /^update "api_tokens"/i.test(sql)) return result;
    log.rowsRead += result.meta?.rows_read ?? 0;
    log.rowsReadByStatement.push(result.meta?.rows_read ?? 0);
    return result;
  };
  const wrap = (stmt: D1PreparedStatement, sql: string, params: unknown[]): D1PreparedStatement => {
    const once =
      <T>(run: () => T) =>
      () => {
        log.roundTrips.push([{ sql, params }]);
        return run();
      };
    const wrapper = {
      bind: (...values: unknown[]) => wrap(stmt.bind(...values), sql, values),
      first: (column?: string) => once(() => (column ? stmt.first(column) : stmt.first()))(),
      all: once(() => stmt.all().then((r) => counted(r, sql))),
      run: once(() => stmt.run().then((r) => counted(r, sql))),
      raw: (options?: { columnNames?: boolean }) =>
        once(() => (options?.columnNames ? stmt.raw({ columnNames: true }) : stmt.raw()))(),
    };
    origin.set(wrapper, { stmt, sql, params });
    return wrapper as unknown as D1PreparedStatement;
  };
  return {
    prepare: (sql: string) => wrap(real.prepare(sql), sql, []),
    batch: (statements: D1PreparedStatement[]) => {
      const known = statements.map((s) => origin.get(s)!);
      log.roundTrips.push(known.map(({ sql, params }) => ({ sql, params })));
      return real
        .batch(known.map((k) => k.stmt))
        .then((results) => results.map((r, i) => counted(r, known[i]!.sql)));
    },
    exec: (sql: string) => real.exec(sql),
    dump: () => real.dump(),
  } as unknown as D1Database;
}

/** A GET through the worker with a D1 binding that records each round trip and statement. */
export async function callInstrumented(
  path: string,
  token: string,
): Promise<{ res: Response; body: any; log: D1Log }> {
  const log: D1Log = { roundTrips: [], rowsRead: 0, rowsReadByStatement: [] };
  const instrumented = { ...env, DB: instrumentD1(env.DB, log) };
  const request = new Request(new URL(path, BASE), { headers: { Authorization: `Bearer ${token}` } });
  const res = await fetchWorker(request, instrumented as typeof env, createExecutionContext());
  const body = await res.json();
  // The once-a-minute `last_used_at` write of authentication, after the response, is not part of the read.
  log.roundTrips = log.roundTrips.filter((trip) => !trip.every((s) => /^update "api_tokens"/i.test(s.sql)));
  return { res, body, log };
}

/** SQLite's plan for each statement of a request, one line per step. */
export async function queryPlans(log: D1Log): Promise<{ sql: string; plan: string[] }[]> {
  const out: { sql: string; plan: string[] }[] = [];
  for (const s of log.roundTrips.flat()) {
    const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${s.sql}`)
      .bind(...s.params)
      .all<{ detail: string }>();
    out.push({ sql: s.sql, plan: results.map((r) => r.detail) });
  }
  return out;
}
