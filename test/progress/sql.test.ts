import { env } from "cloudflare:test";
import { and, asc, desc, eq, gte, inArray, lte, ne, sql } from "drizzle-orm";
import { integer, primaryKey, real, SQLiteSyncDialect, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { courseNumberOf, institutionNumberOf, itemNumbersIn, userNumberOf } from "../../src/db/numbers";
import {
  attempts,
  dailyActivity,
  institutionActivityDays,
  institutionActivityTotals,
  institutionLearnerCourses,
  itemProgress,
  learnerStats,
  lessonProgress,
  memberGroups,
  users,
  weeklyXp,
  xpRankCounts,
} from "../../src/db/schema";
import { activityRowsPageSql, completionsPageSql, type SourceScope } from "../../src/domains/exports/sql";
import { splitRange } from "../../src/domains/institutions/analytics/range";
import { groupActivityStatement, rollupStatement } from "../../src/domains/institutions/analytics/sql";
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
import { LESSONS_IN_PROGRESS_SQL } from "../../src/domains/xapi/delivery/sql";
import { database, inJsonList } from "../../src/platform/db";
import { createPublishedCourse } from "../helpers/progress-fixture";
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

// The progress tables that grow per learner and stay are WITHOUT ROWID on their keys (migrations
// …_progress_rollups_without_rowid and …_institution_activity_days_without_rowid; docs/design/capacity.md,
// "Narrower progress rows"): each statement that reads them seeks the key or the one index left.
describe("the progress tables kept for good", () => {
  const dialect = new SQLiteSyncDialect();
  async function plan(query: { sql: string; params: unknown[] }): Promise<string> {
    const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${query.sql}`)
      .bind(...query.params)
      .all<{ detail: string }>();
    return results.map((r) => r.detail).join("\n");
  }
  async function schemaOf(table: string) {
    const { results } = await env.DB.prepare(
      "SELECT type, name, sql FROM sqlite_schema WHERE tbl_name = ? ORDER BY type DESC, name",
    )
      .bind(table)
      .all<{ type: string; name: string; sql: string }>();
    return results;
  }
  const migration = (suffix: string) => {
    const [found] = env.TEST_MIGRATIONS.filter((m) => m.name.endsWith(suffix));
    if (!found) throw new Error(`migration ${suffix} not found`);
    return found;
  };
  const formerDdl = (prefix: string, table: string) =>
    env.TEST_MIGRATIONS.filter((m) => m.name.startsWith(prefix)).flatMap((m) =>
      m.queries.filter(
        (q) =>
          new RegExp(`^\\s*CREATE (TABLE|INDEX) \`${table}[\`_]`).test(q) || q.includes(`ON \`${table}\``),
      ),
    );

  it("are WITHOUT ROWID, item_progress on numbers, without its lesson, with its time in Unix seconds", async () => {
    const items = await schemaOf("item_progress");
    expect(items.map((r) => [r.type, r.name])).toEqual([["table", "item_progress"]]);
    expect(items[0]!.sql).toMatch(/\) WITHOUT ROWID$/);
    // On numbers, the learner's and the item's, with only what is read.
    expect(items[0]!.sql).toMatch(/PRIMARY KEY\(`user_number`, `item_number`\)/);
    expect(items[0]!.sql).not.toMatch(/lesson_id|user_id|training_item_id|`attempts`|last_attempt_at/);
    expect(items[0]!.sql).toMatch(/`completed_at` integer,/);
    const daily = await schemaOf("daily_activity");
    expect(daily.map((r) => [r.type, r.name])).toEqual([["table", "daily_activity"]]);
    expect(daily[0]!.sql).toMatch(/\) WITHOUT ROWID$/);
    expect(daily[0]!.sql).toMatch(/PRIMARY KEY\(`user_number`, `day`\)/);
    const activity = await schemaOf("institution_activity_days");
    expect(activity.map((r) => [r.type, r.name])).toEqual([
      ["trigger", "institution_activity_days_insert_rollups"],
      ["trigger", "institution_activity_days_update_rollups"],
      ["table", "institution_activity_days"],
      ["index", "institution_activity_days_user_course_idx"],
    ]);
    expect(activity[2]!.sql).toMatch(
      /PRIMARY KEY\(`institution_number`, `user_number`, `day`, `course_number`\)\s*\) WITHOUT ROWID$/,
    );
    const lessons = await schemaOf("lesson_progress");
    expect(lessons.map((r) => [r.type, r.name])).toEqual([
      ["table", "lesson_progress"],
      ["index", "lesson_progress_course_idx"],
    ]);
    expect(lessons[0]!.sql).toMatch(/PRIMARY KEY\(`user_number`, `lesson_number`\)\s*\) WITHOUT ROWID$/);
  });

  it("are read on their keys: a batch's items, the learner's days, and the analytics' probes", async () => {
    const items = sql`(SELECT value FROM json_each(${JSON.stringify(["itm_a", "itm_b"])}))`;
    const recording = await plan(
      db()
        .select()
        .from(itemProgress)
        .where(
          and(
            eq(itemProgress.userNumber, userNumberOf("usr_a")),
            inArray(itemProgress.itemNumber, itemNumbersIn(items)),
          ),
        )
        .toSQL(),
    );
    // The learner's number and the items' are seeks on users' and training_items' keys, in the statement.
    expect(recording).toMatch(/SEARCH item_progress USING PRIMARY KEY \(user_number=\? AND item_number=\?\)/);
    expect(recording).toMatch(/SEARCH users USING INDEX sqlite_autoindex_users_1 \(id=\?\)/);
    expect(recording).toMatch(
      /SEARCH training_items USING INDEX sqlite_autoindex_training_items_1 \(id=\?\)/,
    );
    expect(recording).not.toMatch(/SCAN (item_progress|users|training_items)\b/);
    // The recording's latest active days; the history's and the insights' range.
    const latest = await plan(
      db()
        .select({ day: dailyActivity.day })
        .from(dailyActivity)
        .where(eq(dailyActivity.userNumber, userNumberOf("usr_a")))
        .orderBy(desc(dailyActivity.day))
        .limit(400)
        .toSQL(),
    );
    expect(latest).toMatch(/SEARCH daily_activity USING PRIMARY KEY \(user_number=\?\)/);
    const range = await plan(
      db()
        .select()
        .from(dailyActivity)
        .where(
          and(
            eq(dailyActivity.userNumber, userNumberOf("usr_a")),
            gte(dailyActivity.day, "2026-01-01"),
            lte(dailyActivity.day, "2026-12-31"),
          ),
        )
        .orderBy(asc(dailyActivity.day))
        .toSQL(),
    );
    expect(range).toMatch(/SEARCH daily_activity USING PRIMARY KEY \(user_number=\? AND day>\? AND day<\?\)/);
    for (const details of [latest, range]) expect(details).not.toMatch(/TEMP B-TREE|SCAN daily_activity/);

    // A group's rows (each member's days on the key) and the analytics' probes (a learner on the key,
    // a pair on its index) over a range with partial first and last weeks and a pair to probe.
    const group = await plan(
      dialect.sqlToQuery(
        groupActivityStatement(
          { institutionId: "ins_a", from: "2026-03-01", to: "2026-03-10", group: "g" },
          "week",
        ),
      ),
    );
    expect(group).toMatch(
      /SEARCH r USING PRIMARY KEY \(institution_number=\? AND user_number=\? AND day>\? AND day<\?\)/,
    );
    expect(group).not.toMatch(/SCAN (mg|u|users|c|courses|institutions)\b/);
    const [from, to] = ["2026-03-04", "2026-04-08"];
    const rollup = await plan(
      dialect.sqlToQuery(
        rollupStatement({
          institutionId: "ins_a",
          from,
          to,
          granularity: "week",
          ...splitRange(from, to, "week"),
        }),
      ),
    );
    expect(rollup).toMatch(
      /SEARCH r USING PRIMARY KEY \(institution_number=\? AND user_number=\? AND day>\? AND day<\?\)/,
    );
    expect(rollup).toMatch(/SEARCH r USING COVERING INDEX institution_activity_days_user_course_idx/);
    expect(rollup).not.toMatch(/SCAN (r|users|courses|institutions)\b/);

    // The triggers' probes, as they read the table: a learner's rows on the key from the numbers
    // (institution_activity_days' own, with NEW's numbers), and from the ids (member_groups').
    const byNumbers = await plan({
      sql: `SELECT 1 FROM institution_activity_days r NOT INDEXED
        WHERE r.institution_number = ? AND r.user_number = ? AND r.day >= ? AND r.day <= ?
          AND NOT (r.day = ? AND r.course_number = ?)`,
      params: [1, 2, "2026-03-02", "2026-03-08", "2026-03-04", 3],
    });
    expect(byNumbers).toMatch(
      /SEARCH r USING PRIMARY KEY \(institution_number=\? AND user_number=\? AND day>\? AND day<\?\)/,
    );
    const byIds = await plan({
      sql: `SELECT sum(r.attempts) FROM institution_activity_days r NOT INDEXED
        WHERE r.institution_number = (SELECT number FROM institutions WHERE id = ?)
          AND r.user_number = (SELECT number FROM users WHERE id = ?)`,
      params: ["ins_a", "usr_a"],
    });
    expect(byIds).toMatch(/SEARCH r USING PRIMARY KEY \(institution_number=\? AND user_number=\?\)/);
    // The ids of a row's numbers, for the rollups the triggers write.
    const ids = await plan({
      sql: `SELECT (SELECT id FROM institutions WHERE number = ?), (SELECT id FROM users WHERE number = ?),
        (SELECT id FROM courses WHERE number = ?)`,
      params: [1, 2, 3],
    });
    expect(ids).toMatch(
      /SEARCH institutions USING (COVERING )?INDEX institutions_number_unique \(number=\?\)/,
    );
    expect(ids).toMatch(/SEARCH users USING (COVERING )?INDEX users_number_unique \(number=\?\)/);
    expect(ids).toMatch(/SEARCH courses USING (COVERING )?INDEX courses_number_idx \(number=\?\)/);
    for (const details of [byNumbers, byIds, ids]) expect(details).not.toMatch(/SCAN (?!CONSTANT ROW)/);
  });

  it("lesson_progress is read on its keys by every reader, from the ids it is asked by", async () => {
    const lessonsInBatch = sql`(SELECT lesson_id FROM training_items WHERE id IN (SELECT value FROM json_each(${JSON.stringify(["itm_a"])})))`;
    // The recording: the learner's progress in the batch's lessons.
    const recording = await plan(
      db()
        .select()
        .from(lessonProgress)
        .where(
          and(
            eq(lessonProgress.userNumber, userNumberOf("usr_a")),
            inArray(
              lessonProgress.lessonNumber,
              sql`(SELECT number FROM lessons WHERE id IN ${lessonsInBatch})`,
            ),
          ),
        )
        .toSQL(),
    );
    expect(recording).toMatch(
      /SEARCH lesson_progress USING PRIMARY KEY \(user_number=\? AND lesson_number=\?\)/,
    );
    // The completions export: a learner's lessons of a course, and the course's score.
    const completions = await plan(
      dialect.sqlToQuery(
        completionsPageSql(
          { institutionId: "ins_a", filters: {}, asOf: "2026-06-01T00:00:00Z" },
          ["usr_a", "crs_a", 1],
          100,
        ),
      ),
    );
    // Named (INDEXED BY): without statistics SQLite would walk all of the learner's lessons on the key.
    expect(completions).toMatch(
      /SEARCH lp USING INDEX lesson_progress_course_idx \(user_number=\? AND course_number=\?\)/,
    );
    expect(completions).toMatch(
      /SEARCH s USING INDEX lesson_progress_course_idx \(user_number=\? AND course_number=\?\)/,
    );
    expect(completions).not.toMatch(/SCAN (lp|s|l|lessons|users|courses)\b/);
    // The xAPI delivery's lessons in progress, pair by pair.
    const inProgress = await plan({ sql: LESSONS_IN_PROGRESS_SQL, params: ['[["usr_a","lsn_a"]]'] });
    expect(inProgress).toMatch(/SEARCH lp USING PRIMARY KEY \(user_number=\? AND lesson_number=\?\)/);
    expect(inProgress).not.toMatch(/SCAN (lp|u|l|c)\b/);
  });

  it("item_progress and daily_activity are rebuilt from the former tables, then on numbers, with every row and value kept", async () => {
    const { learner, instructor } = await createTenant();
    const { items } = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 3 });
    const [x, y, z] = items as [string, string, string];
    const [a, b] = [learner.id, instructor.id].sort() as [string, string];
    // The former item_progress, as the first migration made it.
    const formerItems = sqliteTable(
      "item_progress",
      {
        userId: text("user_id").notNull(),
        trainingItemId: text("training_item_id").notNull(),
        lessonId: text("lesson_id").notNull(),
        bestScore: real("best_score").notNull(),
        attempts: integer("attempts").notNull(),
        completedAt: text("completed_at"),
        lastAttemptAt: text("last_attempt_at").notNull(),
      },
      (t) => [primaryKey({ columns: [t.userId, t.trainingItemId] })],
    );
    const formerDays = sqliteTable(
      "daily_activity",
      {
        userId: text("user_id").notNull(),
        day: text("day").notNull(),
        attempts: integer("attempts").notNull(),
        itemsCompleted: integer("items_completed").notNull(),
        correct: integer("correct").notNull(),
        xp: integer("xp").notNull(),
        seconds: integer("seconds").notNull(),
      },
      (t) => [primaryKey({ columns: [t.userId, t.day] })],
    );
    const former = [...formerDdl("0001_", "item_progress"), ...formerDdl("0001_", "daily_activity")];
    expect(former).toHaveLength(2);
    await env.DB.batch([
      env.DB.prepare("DROP TABLE item_progress"),
      env.DB.prepare("DROP TABLE daily_activity"),
      ...former.map((q) => env.DB.prepare(q)),
    ]);
    const item = (
      userId: string,
      trainingItemId: string,
      over: Partial<typeof formerItems.$inferInsert> = {},
    ) => ({
      userId,
      trainingItemId,
      lessonId: "les_a",
      bestScore: 0.8765432101,
      attempts: 3,
      completedAt: "2026-03-01T09:00:00Z",
      lastAttemptAt: "2026-03-02T23:59:59Z",
      ...over,
    });
    await db()
      .insert(formerItems)
      .values([
        item(b, z),
        item(a, y, { completedAt: null, bestScore: 0, attempts: 1, lastAttemptAt: "1999-12-31T00:00:00Z" }),
        item(a, x, { completedAt: "2026-11-27T12:34:56Z", lastAttemptAt: "2026-11-27T12:34:56Z" }),
      ]);
    const days = [
      { userId: a, day: "2026-03-02", attempts: 30, itemsCompleted: 12, correct: 25, xp: 300, seconds: 900 },
      { userId: a, day: "2026-03-01", attempts: 1, itemsCompleted: 0, correct: 0, xp: 0, seconds: 0 },
      { userId: b, day: "2025-12-31", attempts: 2, itemsCompleted: 1, correct: 1, xp: 10, seconds: 61 },
    ];
    await db().insert(formerDays).values(days);
    const before = await db()
      .select()
      .from(formerItems)
      .orderBy(formerItems.userId, formerItems.trainingItemId);

    // 0046: WITHOUT ROWID, no lesson, times in Unix seconds.
    const rebuild = migration("_progress_rollups_without_rowid.sql");
    await env.DB.batch(rebuild.queries.map((q) => env.DB.prepare(q)));
    const seconds = (iso: string | null) => (iso === null ? null : Date.parse(iso) / 1000);
    const rows = async (query: string) => (await env.DB.prepare(query).all()).results;
    const narrower = await rows("SELECT * FROM item_progress ORDER BY user_id, training_item_id");
    expect(narrower).toEqual(
      before.map((r) => ({
        user_id: r.userId,
        training_item_id: r.trainingItemId,
        best_score: r.bestScore,
        attempts: r.attempts,
        completed_at: seconds(r.completedAt),
        last_attempt_at: seconds(r.lastAttemptAt),
      })),
    );

    // On numbers: a row whose learner has no number refuses the migration whole.
    const onNumbers = migration("_progress_on_numbers.sql");
    const toNumbers = () => env.DB.batch(onNumbers.queries.map((q) => env.DB.prepare(q)));
    await env.DB.prepare(
      "INSERT INTO daily_activity (user_id, day, attempts, items_completed, correct, xp, seconds) VALUES ('usr_gone', '2026-01-01', 1, 0, 0, 0, 0)",
    ).run();
    await expect(toNumbers()).rejects.toThrow(/NOT NULL constraint failed/);
    expect(await rows("SELECT user_id FROM daily_activity WHERE user_id = 'usr_gone'")).toHaveLength(1);
    await env.DB.prepare("DELETE FROM daily_activity WHERE user_id = 'usr_gone'").run();
    await toNumbers();

    // Every row and value kept, the ids read back through the numbers.
    const after = await rows(
      `SELECT u.id AS user_id, i.id AS training_item_id, p.best_score, p.completed_at
       FROM item_progress p JOIN users u ON u.number = p.user_number JOIN training_items i ON i.number = p.item_number
       ORDER BY u.id, i.id`,
    );
    expect(after).toEqual(
      narrower.map((r) => ({
        user_id: r.user_id,
        training_item_id: r.training_item_id,
        best_score: r.best_score,
        completed_at: r.completed_at,
      })),
    );
    expect(after).toHaveLength(3);
    const daysAfter = await rows(
      `SELECT u.id AS userId, d.day, d.attempts, d.items_completed AS itemsCompleted, d.correct, d.xp, d.seconds
       FROM daily_activity d JOIN users u ON u.number = d.user_number ORDER BY u.id, d.day`,
    );
    expect(daysAfter).toEqual([days[1], days[0], days[2]]);
    for (const table of ["item_progress", "daily_activity"]) {
      const [created] = await schemaOf(table);
      expect(created!.sql).toMatch(/WITHOUT ROWID$/);
      expect(created!.sql).toMatch(/PRIMARY KEY\(`user_number`, `(item_number|day)`\)/);
    }
  });

  it("institution_activity_days is rebuilt from the former table, then on numbers, with every row kept, no rollup changed, and its triggers again", async () => {
    const { institution, learner, instructor } = await createTenant();
    const courseA = (await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 1 }))
      .courseId;
    const courseB = (await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 1 }))
      .courseId;
    // The former table, as migrations 0013 and 0034 made it (ids, a rowid table, three b-trees).
    const formerDays = sqliteTable("institution_activity_days", {
      institutionId: text("institution_id").notNull(),
      day: text("day").notNull(),
      userId: text("user_id").notNull(),
      courseId: text("course_id").notNull(),
      attempts: integer("attempts").notNull(),
      seconds: integer("seconds").notNull(),
      xp: integer("xp").notNull(),
      lessonsCompleted: integer("lessons_completed").notNull(),
      coursesCompleted: integer("courses_completed").notNull(),
    });
    const numberOf = async (table: "users" | "courses", id: string) =>
      (await env.DB.prepare(`SELECT number FROM ${table} WHERE id = ?`).bind(id).first<number>("number")) ??
      0;
    const former = [
      ...formerDdl("0013_", "institution_activity_days"),
      ...formerDdl("0034_", "institution_activity_days"),
    ];
    expect(former).toHaveLength(3);
    await env.DB.batch([
      env.DB.prepare("DROP TABLE institution_activity_days"),
      ...former.map((q) => env.DB.prepare(q)),
    ]);
    const counts = (attempts: number) => ({
      attempts,
      seconds: attempts * 30,
      xp: attempts * 10,
      lessonsCompleted: attempts > 5 ? 1 : 0,
      coursesCompleted: 0,
    });
    const row = (userId: string, day: string, courseId: string, attempts: number) => ({
      institutionId: institution.id,
      userId,
      day,
      courseId,
      ...counts(attempts),
    });
    // Inserted into the former table, which has no trigger here: the rollups stay empty.
    const [a, b] = [learner.id, instructor.id].sort() as [string, string];
    const rows = [
      row(b, "2026-03-02", courseA, 3),
      row(a, "2026-03-02", courseB, 30),
      row(a, "2026-03-02", courseA, 7),
      row(a, "2026-02-28", courseA, 1),
    ];
    // And one whose learner has no number (a user who is not there).
    await db()
      .insert(formerDays)
      .values([...rows, row("usr_gone", "2026-03-02", courseA, 1)]);
    const ordered = () =>
      db()
        .select()
        .from(formerDays)
        .where(ne(formerDays.userId, "usr_gone"))
        .orderBy(formerDays.institutionId, formerDays.userId, formerDays.day, formerDays.courseId);
    const before = await ordered();
    const totals = () =>
      db().select().from(institutionActivityTotals).orderBy(institutionActivityTotals.period);

    // 0047: WITHOUT ROWID, the same rows.
    const rebuild = migration("_institution_activity_days_without_rowid.sql");
    await env.DB.batch(rebuild.queries.map((q) => env.DB.prepare(q)));
    expect(await ordered()).toEqual(before);
    expect(before).toHaveLength(4);

    // On numbers: a row whose learner has no number refuses the migration whole, changing nothing.
    const onNumbers = migration("_institution_activity_days_on_numbers.sql");
    const toNumbers = () => env.DB.batch(onNumbers.queries.map((q) => env.DB.prepare(q)));
    await expect(toNumbers()).rejects.toThrow(/NOT NULL constraint failed/);
    expect(await db().select().from(formerDays)).toHaveLength(5);
    await db().delete(formerDays).where(eq(formerDays.userId, "usr_gone"));
    await toNumbers();

    // Every row and value kept, the ids read back through the numbers; no rollup written by the copy.
    const after = await env.DB.prepare(
      `SELECT i.id AS institutionId, r.day, u.id AS userId, c.id AS courseId, r.attempts, r.seconds, r.xp,
         r.lessons_completed AS lessonsCompleted, r.courses_completed AS coursesCompleted
       FROM institution_activity_days r JOIN institutions i ON i.number = r.institution_number
         JOIN users u ON u.number = r.user_number JOIN courses c ON c.number = r.course_number
       ORDER BY i.id, u.id, r.day, c.id`,
    ).all();
    expect(after.results).toEqual(before);
    expect(await totals()).toEqual([]);
    const schema = await schemaOf("institution_activity_days");
    expect(schema.map((r) => r.name)).toEqual([
      "institution_activity_days_insert_rollups",
      "institution_activity_days_update_rollups",
      "institution_activity_days",
      "institution_activity_days_user_course_idx",
    ]);
    expect(schema[2]!.sql).toMatch(
      /PRIMARY KEY\(`institution_number`, `user_number`, `day`, `course_number`\)\s*\) WITHOUT ROWID$/,
    );
    const groupTriggers = await env.DB.prepare(
      "SELECT name FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = 'member_groups' ORDER BY name",
    ).all<{ name: string }>();
    expect(groupTriggers.results.map((r) => r.name)).toEqual([
      "member_groups_delete_rollups",
      "member_groups_insert_rollups",
      "member_groups_update_rollups",
    ]);

    // The triggers work on the numbers and write ids: a learner new that day is counted once, a
    // second course of theirs on that day is not; a group's member brings the group's rows, and
    // takes them away when leaving it.
    const numbered = (userId: string, day: string, courseId: string, attempts: number) => ({
      institutionNumber: institutionNumberOf(institution.id),
      userNumber: userNumberOf(userId),
      day,
      courseNumber: courseNumberOf(courseId),
      ...counts(attempts),
    });
    const newcomer = a;
    await db()
      .insert(institutionActivityDays)
      .values(numbered(newcomer, "2026-03-05", courseA, 2));
    await db()
      .insert(institutionActivityDays)
      .values(numbered(newcomer, "2026-03-05", courseB, 2));
    const day = (await totals()).find((t) => t.scope === "all" && t.period === "d:2026-03-05");
    expect(day).toMatchObject({ institutionId: institution.id, learners: 1, attempts: 4 });
    const course = (await totals()).find(
      (t) => t.scope === "course" && t.period === "d:2026-03-05" && t.key === courseA,
    );
    expect(course).toMatchObject({ attempts: 2 });
    const [pair] = await db()
      .select()
      .from(institutionLearnerCourses)
      .where(
        and(eq(institutionLearnerCourses.userId, newcomer), eq(institutionLearnerCourses.courseId, courseA)),
      );
    expect(pair).toMatchObject({
      institutionId: institution.id,
      firstDay: "2026-03-05",
      lastDay: "2026-03-05",
    });
    const group = async () =>
      (await totals()).find((t) => t.scope === "group" && t.period === "d:2026-03-05");
    await db()
      .insert(memberGroups)
      .values({ institutionId: institution.id, userId: newcomer, groupName: "g" });
    expect(await group()).toMatchObject({ key: "g", attempts: 4 });
    await db()
      .update(institutionActivityDays)
      .set({ attempts: 5 })
      .where(
        and(
          eq(institutionActivityDays.userNumber, userNumberOf(newcomer)),
          eq(institutionActivityDays.courseNumber, courseNumberOf(courseA)),
          eq(institutionActivityDays.day, "2026-03-05"),
        ),
      );
    expect(await group()).toMatchObject({ key: "g", attempts: 7 });
    await db().delete(memberGroups).where(eq(memberGroups.userId, newcomer));
    expect(await group()).toMatchObject({ key: "g", attempts: 0 });
    // A number naming no institution is refused rather than counted nowhere.
    await expect(
      env.DB.prepare("INSERT INTO institution_activity_days VALUES (-1, '2026-03-06', ?, ?, 1, 30, 10, 0, 0)")
        .bind(await numberOf("users", newcomer), await numberOf("courses", courseA))
        .run(),
    ).rejects.toThrow(/NOT NULL constraint failed: institution_activity_totals.institution_id/);
  });

  it("lesson_progress is rebuilt from the former table on numbers, WITHOUT ROWID, with every row and value kept", async () => {
    const { learner, instructor } = await createTenant();
    const course = await createPublishedCourse({ lessons: 2, blocksPerLesson: 1, itemsPerBlock: 1 });
    const [x, y] = course.lessons.map((l) => l.id) as [string, string];
    const [a, b] = [learner.id, instructor.id].sort() as [string, string];
    // The former table, as the first migration made it.
    const formerLessons = sqliteTable("lesson_progress", {
      userId: text("user_id").notNull(),
      lessonId: text("lesson_id").notNull(),
      courseId: text("course_id").notNull(),
      itemsDone: integer("items_done").notNull(),
      itemsTotal: integer("items_total").notNull(),
      scoreSum: real("score_sum").notNull(),
      status: text("status").notNull(),
      startedAt: text("started_at").notNull(),
      completedAt: text("completed_at"),
      lastActivityAt: text("last_activity_at").notNull(),
    });
    const former = formerDdl("0001_", "lesson_progress");
    expect(former).toHaveLength(2);
    await env.DB.batch([
      env.DB.prepare("DROP TABLE lesson_progress"),
      ...former.map((q) => env.DB.prepare(q)),
    ]);
    const lesson = (userId: string, lessonId: string, done: number, completedAt: string | null) => ({
      userId,
      lessonId,
      courseId: course.courseId,
      itemsDone: done,
      itemsTotal: 2,
      scoreSum: done * 0.75,
      status: completedAt ? "completed" : "in_progress",
      startedAt: "2026-03-01T10:00:00Z",
      completedAt,
      lastActivityAt: "2026-03-02T10:00:00Z",
    });
    await db()
      .insert(formerLessons)
      .values([lesson(b, x, 1, null), lesson(a, y, 2, "2026-03-02T10:00:00Z"), lesson(a, x, 0, null)]);
    const before = await db()
      .select()
      .from(formerLessons)
      .orderBy(formerLessons.userId, formerLessons.lessonId);

    // A row whose lesson has no number refuses the migration whole, changing nothing.
    const onNumbers = migration("_lesson_progress_by_numbers.sql");
    const toNumbers = () => env.DB.batch(onNumbers.queries.map((q) => env.DB.prepare(q)));
    await db()
      .insert(formerLessons)
      .values(lesson(a, "lsn_gone", 0, null));
    await expect(toNumbers()).rejects.toThrow(/NOT NULL constraint failed/);
    await db().delete(formerLessons).where(eq(formerLessons.lessonId, "lsn_gone"));
    await toNumbers();

    const after = await env.DB.prepare(
      `SELECT u.id AS userId, l.id AS lessonId, c.id AS courseId, p.items_done AS itemsDone,
         p.items_total AS itemsTotal, p.score_sum AS scoreSum, p.status, p.started_at AS startedAt,
         p.completed_at AS completedAt, p.last_activity_at AS lastActivityAt
       FROM lesson_progress p JOIN users u ON u.number = p.user_number JOIN lessons l ON l.number = p.lesson_number
         JOIN courses c ON c.number = p.course_number
       ORDER BY u.id, l.id`,
    ).all();
    expect(after.results).toEqual(before);
    expect(before).toHaveLength(3);
    const schema = await schemaOf("lesson_progress");
    expect(schema.map((r) => [r.type, r.name])).toEqual([
      ["table", "lesson_progress"],
      ["index", "lesson_progress_course_idx"],
    ]);
    expect(schema[0]!.sql).toMatch(/PRIMARY KEY\(`user_number`, `lesson_number`\)\s*\) WITHOUT ROWID$/);
    expect(schema[1]!.sql).toMatch(/\(`user_number`,`course_number`\)/);
  });
});
