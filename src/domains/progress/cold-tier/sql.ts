import { and, asc, eq, gte, lt, lte, type SQL, sql } from "drizzle-orm";
import { attemptArchiveFiles, attempts, institutions } from "../../../db/schema";
import { addDays } from "../../../platform/dates";
import type { Database } from "../../../platform/db";

/**
 * The cold tier's queries. Each reads one index range: attempts by (institution_id, occurred_at, id),
 * the manifest by its key (institution_id, day, part).
 */

/** An attempt's position in the export order. */
export interface AttemptKey {
  occurredAt: string;
  id: string;
}

/** Which attempts may move: they happened before `beforeDay` and were recorded before `recordedBefore`. */
export interface Eligibility {
  beforeDay: string;
  recordedBefore: string;
}

/**
 * Up to `limit` institutions with attempts that may move, each with its first such attempt, oldest
 * first: one seek on (institution_id, occurred_at, id) per institution.
 */
export function institutionsWithColdAttempts(db: Database, eligible: Eligibility, limit: number) {
  const oldest = sql<string | null>`(SELECT a.occurred_at || ' ' || a.id FROM attempts a
    WHERE a.institution_id = ${sql.raw('"institutions"."id"')} AND a.occurred_at < ${eligible.beforeDay}
      AND a.recorded_at < ${eligible.recordedBefore}
    ORDER BY a.occurred_at, a.id LIMIT 1)`;
  return db
    .select({ institutionId: institutions.id, oldest: oldest.as("oldest") })
    .from(institutions)
    .where(sql`oldest IS NOT NULL`)
    .orderBy(sql`oldest`)
    .limit(limit);
}

/** `(occurred_at, id) > key`, or true. */
function afterKey(key: AttemptKey | null): SQL | undefined {
  return key ? sql`(${attempts.occurredAt}, ${attempts.id}) > (${key.occurredAt}, ${key.id})` : undefined;
}

/**
 * The eligible attempts of one institution and day in key order: after `after` (else from the day's
 * start), up to and including `upTo` (else to the day's end), at most `limit`.
 */
export function dayAttempts(
  db: Database,
  scope: { institutionId: string; day: string; after: AttemptKey | null; upTo: AttemptKey | null },
  eligible: Eligibility,
  limit: number,
) {
  const { institutionId, day, after, upTo } = scope;
  return db
    .select()
    .from(attempts)
    .where(
      and(
        eq(attempts.institutionId, institutionId),
        gte(attempts.occurredAt, day),
        lt(attempts.occurredAt, addDays(day, 1)),
        afterKey(after),
        upTo ? sql`(${attempts.occurredAt}, ${attempts.id}) <= (${upTo.occurredAt}, ${upTo.id})` : undefined,
        lt(attempts.recordedAt, eligible.recordedBefore),
      ),
    )
    .orderBy(asc(attempts.occurredAt), asc(attempts.id))
    .limit(limit);
}

/**
 * The verified files of an institution whose range can hold attempts after `after` (else from
 * `fromDay`), up to `toDay` (inclusive, else every later day), in key order, at most `limit`.
 */
export function filesFrom(
  db: Database,
  scope: { institutionId: string; fromDay: string | null; toDay: string | null; after: AttemptKey | null },
  limit: number,
) {
  const { institutionId, fromDay, toDay, after } = scope;
  const f = attemptArchiveFiles;
  return db
    .select()
    .from(f)
    .where(
      and(
        eq(f.institutionId, institutionId),
        fromDay ? gte(f.day, fromDay) : undefined,
        toDay ? lte(f.day, toDay) : undefined,
        after ? sql`(${f.lastOccurredAt}, ${f.lastId}) > (${after.occurredAt}, ${after.id})` : undefined,
        after ? gte(f.day, after.occurredAt.slice(0, 10)) : undefined,
      ),
    )
    .orderBy(asc(f.day), asc(f.part))
    .limit(limit);
}
