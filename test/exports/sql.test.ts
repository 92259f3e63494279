import { env } from "cloudflare:test";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { courseNumberOf, lessonNumberOf, userNumberOf } from "../../src/db/numbers";
import { attempts, courseProgress, learnerStats, lessonProgress } from "../../src/db/schema";
import type { RowKey, SourceScope } from "../../src/domains/exports/sources";
import {
  type ActivityRow,
  type ActivityTextPageRow,
  activityRowsPageSql,
  activityTextPageSql,
  COURSE_ROW,
  type CompletionsRow,
  completionsPageSql,
  type LearnerProgressRow,
  learnerProgressPageSql,
  roundedScoresSql,
} from "../../src/domains/exports/sql";
import { database } from "../../src/platform/db";
import { createPublishedCourse } from "../helpers/progress-fixture";
import { createTenant } from "../helpers/tenants";

// Each statement of src/domains/exports/sql.ts against this file's D1, on rows seeded through
// drizzle: what it returns, in which order, and how its scope, filters and keyset cut the rows.

const db = () => database(env.DB);
const scopeOf = (institutionId: string, filters: SourceScope["filters"] = {}): SourceScope => ({
  institutionId,
  filters,
  asOf: "2026-06-01T00:00:00Z",
});

function progressRow(
  userId: string,
  courseId: string,
  institutionId: string,
  fields: Partial<typeof courseProgress.$inferInsert> = {},
): typeof courseProgress.$inferInsert {
  return {
    userId,
    courseId,
    institutionId,
    lessonsCompleted: 1,
    lessonsTotal: 2,
    itemsDone: 3,
    xp: 30,
    startedAt: "2026-05-01T10:00:00Z",
    completedAt: null,
    lastActivityAt: "2026-05-02T10:00:00Z",
    ...fields,
  };
}

describe("learnerProgressPageSql", () => {
  it("pages the institution's learners' courses by (user, course), with the joined names and the percent", async () => {
    const { institution, learner, instructor } = await createTenant();
    const other = await createTenant();
    // 2 lessons of 2 items: 4 items.
    const course = await createPublishedCourse({ lessons: 2, blocksPerLesson: 1, itemsPerBlock: 2 });
    await db()
      .insert(courseProgress)
      .values([
        progressRow(learner.id, course.courseId, institution.id),
        progressRow(instructor.id, course.courseId, institution.id, { itemsDone: 4, lessonsCompleted: 2 }),
        progressRow(other.learner.id, course.courseId, other.institution.id),
      ]);
    await db()
      .insert(learnerStats)
      .values({
        userId: learner.id,
        institutionId: institution.id,
        xpTotal: 30,
        attempts: 3,
        correct: 3,
        seconds: 60,
        itemsCompleted: 3,
        lessonsCompleted: 1,
        coursesCompleted: 0,
        perfectLessons: 0,
        currentStreak: 1,
        longestStreak: 1,
        cefrLevels: { overall: "A2" },
        updatedAt: "2026-05-02T10:00:00Z",
      });

    const all = await db().values<LearnerProgressRow>(
      learnerProgressPageSql(scopeOf(institution.id), null, 10),
    );
    const byUser = [learner.id, instructor.id].sort();
    expect(all.map((row) => row[0])).toEqual(byUser);
    const learnerRow = all.find((row) => row[0] === learner.id);
    expect(learnerRow).toEqual([
      learner.id,
      learner.email,
      "Test learner",
      course.courseId,
      expect.stringMatching(/^Fixture course /),
      75,
      1,
      2,
      3,
      4,
      30,
      "A2",
      "2026-05-01T10:00:00Z",
      null,
      "2026-05-02T10:00:00Z",
    ]);
    expect(all.find((row) => row[0] === instructor.id)?.[5]).toBe(100);

    // The keyset: after the first row's (user, course), one at a time.
    const first = all[0]!;
    const after: RowKey = [first[0], first[3]];
    const next = await db().values<LearnerProgressRow>(
      learnerProgressPageSql(scopeOf(institution.id), after, 1),
    );
    expect(next.map((row) => row[0])).toEqual([byUser[1]]);
    // The filters: members, course, the range on last_activity_at.
    const members = await db().values<LearnerProgressRow>(
      learnerProgressPageSql(scopeOf(institution.id, { user_ids: [learner.id] }), null, 10),
    );
    expect(members.map((row) => row[0])).toEqual([learner.id]);
    const otherCourse = await db().values<LearnerProgressRow>(
      learnerProgressPageSql(scopeOf(institution.id, { course_id: "crs_none" }), null, 10),
    );
    expect(otherCourse).toEqual([]);
    const later = await db().values<LearnerProgressRow>(
      learnerProgressPageSql(scopeOf(institution.id, { from: "2026-05-03T00:00:00Z" }), null, 10),
    );
    expect(later).toEqual([]);
  });
});

describe("completionsPageSql", () => {
  it("gives a row per completed lesson, then the completed course's own row, with the keyset's seq", async () => {
    const { institution, learner } = await createTenant();
    const course = await createPublishedCourse({ lessons: 2, blocksPerLesson: 1, itemsPerBlock: 2 });
    const [lessonOne, lessonTwo] = course.lessons;
    await db()
      .insert(courseProgress)
      .values(
        progressRow(learner.id, course.courseId, institution.id, {
          lessonsCompleted: 2,
          itemsDone: 4,
          xp: 40,
          completedAt: "2026-05-03T10:00:00Z",
        }),
      );
    const lessonRow = (lessonId: string, scoreSum: number, completedAt: string | null) => ({
      userNumber: userNumberOf(learner.id),
      lessonNumber: lessonNumberOf(lessonId),
      courseNumber: courseNumberOf(course.courseId),
      itemsDone: 2,
      itemsTotal: 2,
      scoreSum,
      status: completedAt ? ("completed" as const) : ("in_progress" as const),
      startedAt: "2026-05-01T10:00:00Z",
      completedAt,
      lastActivityAt: "2026-05-02T10:00:00Z",
    });
    await db()
      .insert(lessonProgress)
      .values([
        lessonRow(lessonOne!.id, 1.5, "2026-05-02T10:00:00Z"),
        lessonRow(lessonTwo!.id, 2, "2026-05-03T10:00:00Z"),
      ]);

    const rows = await db().values<CompletionsRow>(completionsPageSql(scopeOf(institution.id), null, 10));
    expect(rows.map((row) => [row[0], row[6], row[10], row[11], row[12]])).toEqual([
      ["lesson", lessonOne!.id, 0.75, null, 1],
      ["lesson", lessonTwo!.id, 1, null, 2],
      // The course: the mean of its lessons' scores (3.5 of 4 items), its XP, after every lesson.
      ["course", null, 0.875, 40, COURSE_ROW],
    ]);
    expect(rows[0]!.slice(1, 10)).toEqual([
      learner.id,
      learner.email,
      "Test learner",
      course.courseId,
      expect.stringMatching(/^Fixture course /),
      lessonOne!.id,
      "Lesson 1",
      "2026-05-01T10:00:00Z",
      "2026-05-02T10:00:00Z",
    ]);

    // After the first lesson's key (user, course, position): the rest, two at most.
    const after: RowKey = [learner.id, course.courseId, 1];
    const rest = await db().values<CompletionsRow>(completionsPageSql(scopeOf(institution.id), after, 2));
    expect(rest.map((row) => row[12])).toEqual([2, COURSE_ROW]);
    // `to` (exclusive) on completed_at keeps only what was completed before it.
    const early = await db().values<CompletionsRow>(
      completionsPageSql(scopeOf(institution.id, { to: "2026-05-03T00:00:00Z" }), null, 10),
    );
    expect(early.map((row) => row[0])).toEqual(["lesson"]);
  });
});

describe("the activity statements", () => {
  async function seedAttempts() {
    const { institution, learner } = await createTenant();
    const other = await createTenant();
    const attempt = (id: string, occurredAt: string, fields: Partial<typeof attempts.$inferInsert> = {}) => ({
      id,
      userId: learner.id,
      institutionId: institution.id,
      trainingItemId: "itm_sql",
      lessonId: "les_sql",
      courseId: "crs_sql",
      skill: "reading" as const,
      cefrLevel: "B1" as const,
      score: 0.5,
      correct: true,
      durationSeconds: 12,
      occurredAt,
      localDay: occurredAt.slice(0, 10),
      xpAwarded: 10,
      recordedAt: "2026-05-10T00:00:00Z",
      ...fields,
    });
    const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    const ids = { a: `att_${tag}_a`, b: `att_${tag}_b`, c: `att_${tag}_c` };
    await db()
      .insert(attempts)
      .values([
        // Out of key order on purpose; b and c share their instant (ties by id).
        attempt(ids.c, "2026-05-02T10:00:00Z", { score: 1, correct: true }),
        attempt(ids.a, "2026-05-01T10:00:00Z", { score: 0.12345, correct: false, xpAwarded: 0 }),
        attempt(ids.b, "2026-05-02T10:00:00Z", { score: 0.0625 }),
        // Recorded after the job was created: not in it.
        attempt(`att_${tag}_late`, "2026-05-01T11:00:00Z", { recordedAt: "2026-07-01T00:00:00Z" }),
        attempt(`att_${tag}_other`, "2026-05-01T12:00:00Z", { institutionId: other.institution.id }),
      ]);
    return { institution, learner, ids };
  }

  it("activityRowsPageSql pages the attempts by (occurred_at, id), score to thousandths, correct as text", async () => {
    const { institution, learner, ids } = await seedAttempts();
    const rows = await db().values<ActivityRow>(activityRowsPageSql(scopeOf(institution.id), null, 10));
    expect(rows).toEqual([
      [
        ids.a,
        "2026-05-01T10:00:00Z",
        learner.id,
        "crs_sql",
        "les_sql",
        "itm_sql",
        "reading",
        "B1",
        0.123,
        "false",
        12,
        0,
        "2026-05-10T00:00:00Z",
      ],
      expect.arrayContaining([ids.b, 0.063, "true"]),
      expect.arrayContaining([ids.c, 1, "true"]),
    ]);
    const after: RowKey = ["2026-05-02T10:00:00Z", ids.b];
    const rest = await db().values<ActivityRow>(activityRowsPageSql(scopeOf(institution.id), after, 10));
    expect(rest.map((row) => row[0])).toEqual([ids.c]);
    const ranged = await db().values<ActivityRow>(
      activityRowsPageSql(scopeOf(institution.id, { from: "2026-05-02T00:00:00Z" }), null, 1),
    );
    expect(ranged.map((row) => row[0])).toEqual([ids.b]);
  });

  it("activityTextPageSql gives the same page as CSV lines joined by SQLite, with its count and type check", async () => {
    const { institution, learner, ids } = await seedAttempts();
    const page = await db().get<ActivityTextPageRow>(activityTextPageSql(scopeOf(institution.id), null, 2));
    const line = (id: string, at: string, score: string, correct: string, xp: number) =>
      `${id},${at},${learner.id},crs_sql,les_sql,itm_sql,reading,B1,${score},${correct},12,${xp},2026-05-10T00:00:00Z\r\n`;
    expect(page).toEqual({
      count: 2,
      types_ok: 1,
      text:
        line(ids.a, "2026-05-01T10:00:00Z", "0.123", "false", 0) +
        line(ids.b, "2026-05-02T10:00:00Z", "0.063", "true", 10),
    });
    const last = await db().get<ActivityTextPageRow>(
      activityTextPageSql(scopeOf(institution.id), ["2026-05-02T10:00:00Z", ids.b], 2),
    );
    // A score of 1 is written `1`, as JavaScript prints it, not SQLite's `1.0`.
    expect(last).toEqual({
      count: 1,
      types_ok: 1,
      text: line(ids.c, "2026-05-02T10:00:00Z", "1", "true", 10),
    });
    const empty = await db().get<ActivityTextPageRow>(
      activityTextPageSql(scopeOf(institution.id), ["2026-05-03T00:00:00Z", ""], 2),
    );
    expect(empty).toEqual({ count: 0, types_ok: null, text: null });
  });

  it("roundedScoresSql rounds archived scores as the page statements do, each score once", async () => {
    // Ties, thirds and a long double: what round(score, 3) gives in a page, for scores read from R2.
    const scores = [0.1235, 0.0005, 0.9995, 1 / 3, 2 / 3, 1, 0, 0.12345678901234];
    const rows = await db().values<[number, number]>(roundedScoresSql(scores));
    expect(rows.map(([score]) => score)).toEqual(scores);
    const viaTable = await db().values<[number]>(
      sql`SELECT round(value, 3) FROM (SELECT CAST(value AS REAL) AS value FROM json_each(${JSON.stringify(scores)}))`,
    );
    expect(rows.map(([, rounded]) => rounded)).toEqual(viaTable.map(([r]) => r));
    for (const [score, rounded] of rows) {
      expect(Math.abs(rounded - score)).toBeLessThanOrEqual(0.0005 + 1e-12);
      expect(Math.round(rounded * 1000) / 1000).toBe(rounded);
    }
  });
});
