import { env } from "cloudflare:test";
import { eq, sql } from "drizzle-orm";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { attempts, learnerStats, users, weeklyXp, xpRankCounts } from "../../src/db/schema";
import { activityRowsPageSql, type SourceScope } from "../../src/domains/exports/sql";
import { ALL_TIME_PERIOD, PLATFORM_SCOPE, RANK_BASE, RANK_LEVELS } from "../../src/domains/progress/rank";
import { recordedAttempts } from "../../src/domains/progress/recording/load";
import {
  LEADERBOARD_SUBJECT_SQL,
  LEADERBOARD_TOP_SQL,
  type LeaderboardRecord,
  type LeaderboardSubjectRecord,
  learnersAboveSql,
  PURGE_PAST_RANK_COUNTS_SQL,
  PURGE_PAST_WEEKLY_XP_SQL,
} from "../../src/domains/progress/sql";
import { database, inJsonList } from "../../src/platform/db";
import { createTenant } from "../helpers/tenants";

const db = () => database(env.DB);

/** Adds one learner at `xp` to a board's rank counts, as the recording's rank move would. */
async function countOnBoard(period: string, scope: string, xp: number) {
  for (let level = 0; level < RANK_LEVELS; level++) {
    const unit = RANK_BASE ** level;
    if (xp < unit) break;
    await db()
      .insert(xpRankCounts)
      .values({ period, scope, level, bucket: Math.floor(xp / unit), learners: 1 })
      .onConflictDoUpdate({
        target: [xpRankCounts.period, xpRankCounts.scope, xpRankCounts.level, xpRankCounts.bucket],
        set: { learners: sql`${xpRankCounts.learners} + 1` },
      });
  }
}

/** A learner's XP of `week` on weekly_xp and on both of its boards' counts. */
async function weekXp(week: string, user: { id: string }, institutionId: string, xp: number) {
  await db().insert(weeklyXp).values({ week, userId: user.id, institutionId, xp });
  await countOnBoard(week, PLATFORM_SCOPE, xp);
  await countOnBoard(week, institutionId, xp);
}

/** A learner's all-time XP on learner_stats and on both all-time boards' counts. */
async function allTimeXp(user: { id: string }, institutionId: string, xp: number) {
  await db().insert(learnerStats).values({
    userId: user.id,
    institutionId,
    xpTotal: xp,
    attempts: 1,
    correct: 1,
    seconds: 1,
    itemsCompleted: 0,
    lessonsCompleted: 0,
    coursesCompleted: 0,
    perfectLessons: 0,
    currentStreak: 0,
    longestStreak: 0,
    cefrLevels: {},
    updatedAt: "2026-01-01T00:00:00.000Z",
  });
  await countOnBoard(ALL_TIME_PERIOD, PLATFORM_SCOPE, xp);
  await countOnBoard(ALL_TIME_PERIOD, institutionId, xp);
}

const ids = (rows: LeaderboardRecord[]) => rows.map((r) => [r.user_id, r.xp]);

describe("learnersAboveSql", () => {
  it("counts the learners of a board with more XP, exactly, across bucket levels", async () => {
    const period = "2040-01-02";
    for (const xp of [5, 16, 17, 300, 4096, 70_000]) await countOnBoard(period, "scope_above", xp);
    const above = async (xp: number) =>
      // An integer, as the XP columns it is used with (a bound number may arrive as a real).
      (
        await env.DB.prepare(`SELECT ${learnersAboveSql("CAST(?1 AS INTEGER)", "?2", "?3")} AS n`)
          .bind(xp, period, "scope_above")
          .first<{ n: number }>()
      )?.n;
    expect(await above(0)).toBe(6);
    expect(await above(5)).toBe(5);
    expect(await above(16)).toBe(4);
    expect(await above(299)).toBe(3);
    expect(await above(4096)).toBe(1);
    expect(await above(70_000)).toBe(0);
    expect(await above(1_000_000)).toBe(0);
  });
});

describe("LEADERBOARD_TOP_SQL", () => {
  it("lists a week's board by XP (ties by user id), without learners at 0, on the platform and per institution", async () => {
    const week = "2040-02-06";
    const a = await createTenant();
    const b = await createTenant();
    await weekXp(week, a.learner, a.institution.id, 50);
    await weekXp(week, a.instructor, a.institution.id, 50);
    await weekXp(week, a.admin, a.institution.id, 0);
    await weekXp(week, b.learner, b.institution.id, 80);
    await db().update(users).set({ leaderboardOptOut: true }).where(eq(users.id, b.learner.id));

    const platform = await env.DB.prepare(LEADERBOARD_TOP_SQL.week.platform)
      .bind(week, 10)
      .all<LeaderboardRecord>();
    const tied = [a.learner.id, a.instructor.id].sort();
    expect(ids(platform.results)).toEqual([[b.learner.id, 80], ...tied.map((id) => [id, 50])]);
    expect(platform.results[0]).toEqual({
      user_id: b.learner.id,
      name: "Test learner",
      institution_id: b.institution.id,
      opt_out: 1,
      xp: 80,
    });

    const institution = await env.DB.prepare(LEADERBOARD_TOP_SQL.week.institution)
      .bind(week, 1, a.institution.id)
      .all<LeaderboardRecord>();
    expect(ids(institution.results)).toEqual([[tied[0], 50]]);
  });

  it("lists the all-time board from learner_stats, on the platform and per institution", async () => {
    const a = await createTenant();
    const b = await createTenant();
    await allTimeXp(a.learner, a.institution.id, 900_000_001);
    await allTimeXp(a.instructor, a.institution.id, 0);
    await allTimeXp(b.learner, b.institution.id, 900_000_002);

    const platform = await env.DB.prepare(LEADERBOARD_TOP_SQL.all_time.platform)
      .bind(2)
      .all<LeaderboardRecord>();
    expect(ids(platform.results)).toEqual([
      [b.learner.id, 900_000_002],
      [a.learner.id, 900_000_001],
    ]);
    const institution = await env.DB.prepare(LEADERBOARD_TOP_SQL.all_time.institution)
      .bind(10, a.institution.id)
      .all<LeaderboardRecord>();
    expect(ids(institution.results)).toEqual([[a.learner.id, 900_000_001]]);
  });
});

describe("LEADERBOARD_SUBJECT_SQL", () => {
  it("answers the subject's week entry with the learners above them, 0 XP when absent, nothing for an unknown user", async () => {
    const week = "2040-03-05";
    const { learner, instructor, admin, institution } = await createTenant();
    await weekXp(week, learner, institution.id, 40);
    await weekXp(week, instructor, institution.id, 400);
    const subject = (userId: string, scope: string) =>
      env.DB.prepare(LEADERBOARD_SUBJECT_SQL.week)
        .bind(week, userId, scope)
        .first<LeaderboardSubjectRecord>();

    expect(await subject(learner.id, institution.id)).toEqual({
      user_id: learner.id,
      name: "Test learner",
      institution_id: institution.id,
      opt_out: 0,
      xp: 40,
      above: 1,
    });
    expect(await subject(admin.id, institution.id)).toMatchObject({ user_id: admin.id, xp: 0, above: 2 });
    expect(await subject(instructor.id, PLATFORM_SCOPE)).toMatchObject({ xp: 400, above: 0 });
    expect(await subject("usr_nobody", PLATFORM_SCOPE)).toBeNull();
  });

  it("answers the subject's all-time entry from learner_stats", async () => {
    const { learner, instructor, institution } = await createTenant();
    await allTimeXp(learner, institution.id, 30);
    await allTimeXp(instructor, institution.id, 31);
    const row = await env.DB.prepare(LEADERBOARD_SUBJECT_SQL.all_time)
      .bind(learner.id, institution.id)
      .first<LeaderboardSubjectRecord>();
    expect(row).toMatchObject({ user_id: learner.id, xp: 30, above: 1 });
  });
});

describe("PURGE_PAST_WEEKLY_XP_SQL", () => {
  it("deletes at most the limit of rows of weeks before the oldest kept, oldest week first", async () => {
    const { learner, instructor, admin, institution } = await createTenant();
    const row = (week: string, user: { id: string }) => ({
      week,
      userId: user.id,
      institutionId: institution.id,
      xp: 1,
    });
    await db()
      .insert(weeklyXp)
      .values([
        row("1990-01-01", learner),
        row("1990-01-08", instructor),
        row("1990-01-15", admin),
        row("1990-01-22", learner),
      ]);
    const purged = await env.DB.prepare(PURGE_PAST_WEEKLY_XP_SQL).bind("1990-01-22", 2).run();
    expect(purged.meta.changes).toBe(2);
    const left = await db()
      .select({ week: weeklyXp.week })
      .from(weeklyXp)
      .where(eq(weeklyXp.institutionId, institution.id))
      .orderBy(weeklyXp.week);
    expect(left.map((r) => r.week)).toEqual(["1990-01-15", "1990-01-22"]);
  });
});

describe("PURGE_PAST_RANK_COUNTS_SQL", () => {
  it("deletes the counts of past weeks without weekly_xp rows, never all-time counts or a week still stored", async () => {
    const { learner, institution } = await createTenant();
    const scope = `ins_purge_${institution.id}`;
    const count = (period: string) => ({ period, scope, level: 0, bucket: 1, learners: 1 });
    await db()
      .insert(xpRankCounts)
      .values([count("1980-01-07"), count("1980-01-14"), count("2999-01-07"), count(ALL_TIME_PERIOD)]);
    await db()
      .insert(weeklyXp)
      .values({ week: "1980-01-14", userId: learner.id, institutionId: institution.id, xp: 1 });
    const purged = await env.DB.prepare(PURGE_PAST_RANK_COUNTS_SQL).bind("2000-01-03").run();
    expect(purged.meta.changes).toBe(1);
    const left = await db()
      .select({ period: xpRankCounts.period })
      .from(xpRankCounts)
      .where(eq(xpRankCounts.scope, scope))
      .orderBy(xpRankCounts.period);
    expect(left.map((r) => r.period).sort()).toEqual(["1980-01-14", "2999-01-07", ALL_TIME_PERIOD].sort());
  });
});

// `attempts` is WITHOUT ROWID, keyed by its id (migration …_attempts_without_rowid; docs/design/capacity.md,
// "Narrower attempt rows"): one b-tree for the rows and their ids, one index for the institution's time order.
describe("the attempts table", () => {
  const dialect = new SQLiteSyncDialect();
  type AttemptInsert = typeof attempts.$inferInsert;
  function row(overrides: Partial<AttemptInsert> = {}): AttemptInsert {
    return {
      id: crypto.randomUUID(),
      userId: "usr_rowid_a",
      institutionId: "ins_rowid",
      trainingItemId: "itm_rowid",
      lessonId: "les_rowid",
      courseId: "crs_rowid",
      skill: "reading",
      cefrLevel: "A1",
      score: 1 / 3,
      correct: true,
      durationSeconds: 12,
      occurredAt: "2026-03-01T09:00:00Z",
      localDay: "2026-03-01",
      xpAwarded: 10,
      recordedAt: "2026-03-01T09:00:01Z",
      ...overrides,
    };
  }
  async function plan(query: { sql: string; params: unknown[] }): Promise<string> {
    const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${query.sql}`)
      .bind(...query.params)
      .all<{ detail: string }>();
    return results.map((r) => r.detail).join("\n");
  }

  it("is WITHOUT ROWID, with the institution's time order as its only index", async () => {
    const { results } = await env.DB.prepare(
      "SELECT type, name, sql FROM sqlite_schema WHERE tbl_name = 'attempts' ORDER BY type DESC, name",
    ).all<{ type: string; name: string; sql: string }>();
    expect(results.map((r) => [r.type, r.name])).toEqual([
      ["table", "attempts"],
      ["index", "attempts_institution_time_idx"],
    ]);
    expect(results[0]!.sql).toMatch(/`id` text PRIMARY KEY NOT NULL/);
    expect(results[0]!.sql).toMatch(/\) WITHOUT ROWID$/);
  });

  it("keeps an attempt id unique across learners, times and institutions", async () => {
    const first = row();
    await db().insert(attempts).values(first);
    const insert = (r: AttemptInsert) =>
      db()
        .insert(attempts)
        .values(r)
        .then(
          () => "inserted",
          (e: Error) => String((e.cause as Error | undefined)?.message ?? e),
        );
    for (const twin of [
      { ...first, score: 0 },
      { ...first, userId: "usr_rowid_b", occurredAt: "2026-03-02T10:00:00Z" },
      { ...first, institutionId: null, occurredAt: "2025-01-01T00:00:00Z" },
    ])
      expect(await insert(twin)).toMatch(/UNIQUE constraint failed: attempts\.id/);
    const stored = await db().select().from(attempts).where(eq(attempts.id, first.id));
    expect(stored).toEqual([first]);
  });

  it("finds a batch's recorded ids (recording) and an event's attempts (the xAPI subscriber) by a seek on the key", async () => {
    const ids = [crypto.randomUUID(), crypto.randomUUID()];
    const recording = await plan(
      recordedAttempts(
        db(),
        ids.map((id) => ({ id })),
      ).toSQL(),
    );
    expect(recording).toMatch(/SEARCH attempts USING PRIMARY KEY \(id=\?\)/);
    expect(recording).not.toMatch(/SCAN attempts/);
    const subscriber = await plan(db().select().from(attempts).where(inJsonList(attempts.id, ids)).toSQL());
    expect(subscriber).toMatch(/SEARCH attempts USING PRIMARY KEY \(id=\?\)/);
    expect(subscriber).not.toMatch(/SCAN attempts/);
  });

  it("reads an activity export's keyset page on attempts_institution_time_idx, without sorting", async () => {
    const scope: SourceScope = {
      institutionId: "ins_rowid",
      asOf: "2026-04-01T00:00:00Z",
      filters: {
        from: "2026-03-01T00:00:00Z",
        to: "2026-03-31T00:00:00Z",
        course_id: "crs_rowid",
        user_ids: ["usr_rowid_a"],
      },
    };
    for (const after of [null, ["2026-03-01T09:00:00Z", "a"]]) {
      const details = await plan(dialect.sqlToQuery(activityRowsPageSql(scope, after, 500)));
      expect(details).toContain("attempts_institution_time_idx");
      expect(details).not.toMatch(/TEMP B-TREE|SCAN attempts/);
    }
  });

  it("is rebuilt from the former rowid table by its migration with every row and value kept", async () => {
    const [former] = env.TEST_MIGRATIONS.filter((m) => m.name.startsWith("0001_"));
    const [rebuild] = env.TEST_MIGRATIONS.filter((m) => m.name.endsWith("_attempts_without_rowid.sql"));
    if (!former || !rebuild) throw new Error("migrations not found");
    const formerDdl = former.queries.filter(
      (q) => /^\s*CREATE (TABLE|INDEX) `attempts/.test(q) || /ON `attempts`/.test(q),
    );
    expect(formerDdl).toHaveLength(3);
    await env.DB.batch([env.DB.prepare("DROP TABLE attempts"), ...formerDdl.map((q) => env.DB.prepare(q))]);
    const rows = [
      row(),
      row({ userId: "usr_rowid_b", institutionId: null, score: 0.45678901234, correct: false }),
      row({ occurredAt: "2026-03-01T08:00:00Z", xpAwarded: 0, durationSeconds: 0 }),
    ];
    await db().insert(attempts).values(rows);
    const before = await env.DB.prepare("SELECT * FROM attempts ORDER BY id").all();

    await env.DB.batch(rebuild.queries.map((q) => env.DB.prepare(q)));

    const after = await env.DB.prepare("SELECT * FROM attempts ORDER BY id").all();
    expect(after.results).toEqual(before.results);
    expect(after.results).toHaveLength(3);
    const { results } = await env.DB.prepare(
      "SELECT name, sql FROM sqlite_schema WHERE tbl_name = 'attempts' ORDER BY type DESC",
    ).all<{ name: string; sql: string }>();
    expect(results.map((r) => r.name)).toEqual(["attempts", "attempts_institution_time_idx"]);
    expect(results[0]!.sql).toMatch(/WITHOUT ROWID$/);
  });
});
