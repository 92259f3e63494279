import { and, asc, eq, exists, gt, gte, lte, or, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import {
  achievements,
  attempts,
  courseProgress,
  courses,
  lessonProgress,
  lessons,
  users,
  type XapiActivity,
} from "../../../db/schema";

type Attempt = typeof attempts.$inferSelect;

import { inJsonList } from "../../../platform/db";
import type { ServiceContext } from "../../../platform/service/context";
import { type ColdScope, coldPage, mergeTiers } from "../../progress/cold-tier/read";
import { ACHIEVEMENTS } from "../../progress/rules";
import { eventFacts, eventPayload, lessonScore, progressedFact } from "../delivery/event-facts";
import type { Fact } from "../statements";
import type { BackfillSource } from "./jobs";
import { LEVEL_CHANGES_SQL, type LevelChangeRow } from "./sql";

/**
 * What a back-fill reads, source by source, a keyset page at a time: the institution's CURRENT
 * members' activity from `since` to `until` (both included), made into the same facts the
 * outbox subscriber makes (delivery/event-facts.ts), so that each has the statement id the live path
 * gives it. `failed` (the endpoint's failed statements) is not a fact source: the job re-queues them.
 */

export interface SourceScope {
  institutionId: string;
  since: string;
  until: string;
  /** The verbs the endpoint forwards now. */
  wants: ReadonlySet<XapiActivity>;
}

export interface FactPage {
  facts: Fact[];
  /** Rows read (a page shorter than the limit is the source's last). */
  rows: number;
  /** The last row's key, for the cursor. */
  last: string[] | null;
}

type FactSource = (
  ctx: ServiceContext,
  scope: SourceScope,
  after: string[] | null,
  limit: number,
) => Promise<FactPage>;

/** `(a, b) > (x, y)`: the keyset after the last row of the previous page. */
function after(columns: [SQLiteColumn, SQLiteColumn], key: string[] | null): SQL | undefined {
  if (!key) return undefined;
  return sql`(${columns[0]}, ${columns[1]}) > (${key[0]}, ${key[1]})`;
}

/** Whose activity counts: a current member of the institution. */
function currentMember(ctx: ServiceContext, userId: SQLiteColumn, institutionId: string): SQL {
  return exists(
    ctx.db
      .select({ one: sql`1` })
      .from(users)
      .where(and(eq(users.id, userId), eq(users.institutionId, institutionId))),
  );
}

/** Within the window, both ends included (times are stored to the second, `until` is the request's second). */
const between = (column: SQLiteColumn, scope: SourceScope) =>
  and(gte(column, scope.since), lte(column, scope.until));

function page<T>(rows: T[], key: (row: T) => string[], facts: Fact[]): FactPage {
  const last = rows.at(-1);
  return { facts, rows: rows.length, last: last === undefined ? null : key(last) };
}

/** The page of attempts after `key`: a range of attempts_institution_time_idx (a test reads the plan). */
export function attemptsPage(ctx: ServiceContext, scope: SourceScope, key: string[] | null, limit: number) {
  return ctx.db
    .select()
    .from(attempts)
    .where(
      and(
        eq(attempts.institutionId, scope.institutionId),
        between(attempts.occurredAt, scope),
        after([attempts.occurredAt, attempts.id], key),
        currentMember(ctx, attempts.userId, scope.institutionId),
      ),
    )
    .orderBy(asc(attempts.occurredAt), asc(attempts.id))
    .limit(limit);
}

/**
 * `answered`: every attempt recorded in the institution, from both tiers (D1 and the cold tier's
 * files in R2, progress/cold-tier): the same rows in the same order as before any was archived.
 */
const attemptsSource: FactSource = async (ctx, scope, key, limit) => {
  const position = key ? { occurredAt: key[0] ?? "", id: key[1] ?? "" } : null;
  const cold: ColdScope = {
    institutionId: scope.institutionId,
    fromDay: scope.since.slice(0, 10),
    toDay: scope.until.slice(0, 10),
    keep: (a) => a.occurredAt >= scope.since && a.occurredAt <= scope.until,
  };
  const [hot, archived] = await Promise.all([
    attemptsPage(ctx, scope, key, limit),
    coldPage(ctx, cold, position, limit),
  ]);
  const merged = mergeTiers(hot, archived, limit, (a) => a);
  // The archived rows of former members drop out here, as the D1 page leaves them out.
  const members = await currentMembers(ctx, scope.institutionId, archived);
  const fromD1 = new Set(hot);
  const rows = merged.filter((a) => fromD1.has(a) || members.has(a.userId));
  // The cursor moves past every row read, kept or not.
  return page(
    merged,
    (a) => [a.occurredAt, a.id],
    rows.map((attempt) => ({ verb: "answered", attempt })),
  );
};

/** Which of the archived rows' learners are the institution's members now. */
async function currentMembers(ctx: ServiceContext, institutionId: string, rows: readonly Attempt[]) {
  const ids = [...new Set(rows.map((a) => a.userId))];
  if (ids.length === 0) return new Set<string>();
  const found = await ctx.db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.institutionId, institutionId), inJsonList(users.id, ids)));
  return new Set(found.map((u) => u.id));
}

/**
 * The page of the members' lesson_progress rows after `key` ([user id, lesson id]) that are
 * `progressed` (still in progress, items done, with activity in the window: their current step) or
 * `completed` (in the window), as the endpoint wants. The rows are stored by numbers
 * (docs/design/capacity.md, "Integer keys"); the page is keyed and answered by ids, as before: the
 * learner's, then the lesson's (a test reads the plan).
 */
export function lessonsPage(ctx: ServiceContext, scope: SourceScope, key: string[] | null, limit: number) {
  const progressed = scope.wants.has("progressed")
    ? and(
        eq(lessonProgress.status, "in_progress"),
        gt(lessonProgress.itemsDone, 0),
        between(lessonProgress.lastActivityAt, scope),
      )
    : undefined;
  const completed = scope.wants.has("completed")
    ? and(eq(lessonProgress.status, "completed"), between(lessonProgress.completedAt, scope))
    : undefined;
  return ctx.db
    .select({ userId: users.id, lessonId: lessons.id, courseId: courses.id, lesson: lessonProgress })
    .from(users)
    .innerJoin(lessonProgress, eq(lessonProgress.userNumber, users.number))
    .innerJoin(lessons, eq(lessons.number, lessonProgress.lessonNumber))
    .innerJoin(courses, eq(courses.number, lessonProgress.courseNumber))
    .where(
      and(
        eq(users.institutionId, scope.institutionId),
        after([users.id, lessons.id], key),
        or(progressed, completed),
      ),
    )
    .orderBy(asc(users.id), asc(lessons.id))
    .limit(limit);
}

/** `progressed` and `completed` lessons: the members' lesson_progress rows (`lessonsPage`). */
const lessonsSource: FactSource = async (ctx, scope, key, limit) => {
  const rows = await lessonsPage(ctx, scope, key, limit);
  const facts = rows.map(
    ({ userId, lessonId, courseId, lesson: l }): Fact =>
      l.status === "completed"
        ? {
            verb: "completed",
            object: "lesson",
            userId,
            lessonId,
            courseId,
            score: lessonScore(l.scoreSum, l.itemsDone),
            at: l.completedAt ?? l.lastActivityAt,
          }
        : progressedFact({
            user_id: userId,
            lesson_id: lessonId,
            course_id: courseId,
            items_done: l.itemsDone,
            items_total: l.itemsTotal,
            last_activity_at: l.lastActivityAt,
          }),
  );
  return page(rows, (r) => [r.userId, r.lessonId], facts);
};

/** `completed` courses: the members' course_progress rows completed in the window. */
const coursesSource: FactSource = async (ctx, scope, key, limit) => {
  const rows = await ctx.db
    .select({ course: courseProgress })
    .from(users)
    .innerJoin(courseProgress, eq(courseProgress.userId, users.id))
    .where(
      and(
        eq(users.institutionId, scope.institutionId),
        after([courseProgress.userId, courseProgress.courseId], key),
        between(courseProgress.completedAt, scope),
      ),
    )
    .orderBy(asc(courseProgress.userId), asc(courseProgress.courseId))
    .limit(limit);
  const facts = rows.map(
    ({ course: c }): Fact => ({
      verb: "completed",
      object: "course",
      userId: c.userId,
      courseId: c.courseId,
      at: c.completedAt ?? c.lastActivityAt,
    }),
  );
  return page(rows, (r) => [r.course.userId, r.course.courseId], facts);
};

const ACHIEVEMENT_NAMES = new Map<string, string>(ACHIEVEMENTS.map((a) => [a.code, a.name]));

/** `earned`: the members' achievements unlocked in the window. */
const achievementsSource: FactSource = async (ctx, scope, key, limit) => {
  const rows = await ctx.db
    .select({ achievement: achievements })
    .from(users)
    .innerJoin(achievements, eq(achievements.userId, users.id))
    .where(
      and(
        eq(users.institutionId, scope.institutionId),
        after([achievements.userId, achievements.code], key),
        between(achievements.unlockedAt, scope),
      ),
    )
    .orderBy(asc(achievements.userId), asc(achievements.code))
    .limit(limit);
  const facts = rows.map(
    ({ achievement: a }): Fact => ({
      verb: "earned",
      userId: a.userId,
      code: a.code,
      name: ACHIEVEMENT_NAMES.get(a.code) ?? a.code,
      at: a.unlockedAt,
    }),
  );
  return page(rows, (r) => [r.achievement.userId, r.achievement.code], facts);
};

/**
 * `mastered`: the institution's `cefr.level_changed` events still in the outbox (kept 30 days) of
 * current members; a rise is a level mastered, as the subscriber reads it.
 */
const levelsSource: FactSource = async (ctx, scope, key, limit) => {
  const { results } = await ctx.d1
    .prepare(LEVEL_CHANGES_SQL)
    .bind(scope.institutionId, scope.since, scope.until, key?.[0] ?? "", key?.[1] ?? "", limit)
    .all<LevelChangeRow>();
  const facts = results.flatMap((e) => eventFacts(e, eventPayload(e)));
  return page(results, (e) => [e.created_at, e.id], facts);
};

/** Each fact source, and whether an endpoint forwarding `wants` needs it at all. */
export const FACT_SOURCES: Record<
  Exclude<BackfillSource, "failed">,
  { read: FactSource; needed: (wants: ReadonlySet<XapiActivity>) => boolean }
> = {
  attempts: { read: attemptsSource, needed: (w) => w.has("answered") },
  lessons: { read: lessonsSource, needed: (w) => w.has("progressed") || w.has("completed") },
  courses: { read: coursesSource, needed: (w) => w.has("completed") },
  achievements: { read: achievementsSource, needed: (w) => w.has("earned") },
  levels: { read: levelsSource, needed: (w) => w.has("mastered") },
};
