import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { courses, lessons } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { nowIso as iso } from "../../src/platform/ids";
import { type CourseFixture, createPublishedCourse } from "../helpers/progress-fixture";
import { createTenant, type Tenant, type TestUser } from "../helpers/tenants";
import { attempt, learnerIn, record } from "../progress/reads/support";
import { exportRecords } from "./support";

// Known activity, recorded through POST /api/progress/attempts, then each export type through the
// real exports queue, parsed with a CSV parser and compared row by row.

const DAY = 86_400_000;
const base = Math.floor(Date.now() / 1000) * 1000 - 3 * DAY;
/** Minute `i` of day `day` of the scenario. */
const at = (i: number, day: number) => base + day * DAY + i * 60_000;

const L1_NAME = 'Doe, "Jo"\nSecond line';
const L2_NAME = '=HYPERLINK("http://evil.example","x")';
const C2_TITLE = '-Minus, "course"';
const LESSON_TWO_TITLE = "@lesson two";

let tenant: Tenant;
let l1: TestUser;
let l2: TestUser;
let c1: CourseFixture;
let c2: CourseFixture;
let c1Title: string;
const sent: {
  user: string;
  course: string;
  lesson: string;
  item: string;
  score: number;
  correct: boolean;
  at: number;
  xp: number;
  id: string;
}[] = [];

async function send(
  learner: TestUser,
  course: CourseFixture,
  lessonIndex: number,
  itemIndex: number,
  when: number,
  score = 1,
  xp = 10,
) {
  const lesson = course.lessons[lessonIndex]!;
  const item = lesson.items[itemIndex]!;
  const a = attempt(item.id, { at: when, score, correct: score >= 0.6 });
  await record(learner.token, [a]);
  sent.push({
    user: learner.id,
    course: course.courseId,
    lesson: lesson.id,
    item: item.id,
    score,
    correct: score >= 0.6,
    at: when,
    xp: score >= 0.6 ? xp : 0,
    id: a.id,
  });
}

beforeAll(async () => {
  tenant = await createTenant();
  l1 = await learnerIn(tenant.institution.id, { name: L1_NAME });
  l2 = await learnerIn(tenant.institution.id, { name: L2_NAME });
  c1 = await createPublishedCourse({
    lessons: 2,
    blocksPerLesson: 1,
    itemsPerBlock: 6,
    skills: ["vocabulary"],
    levels: ["A1"],
    xp: 10,
  });
  c2 = await createPublishedCourse({
    lessons: 1,
    blocksPerLesson: 1,
    itemsPerBlock: 2,
    skills: ["grammar"],
    levels: ["A1"],
    xp: 5,
  });
  const db = database(env.DB);
  await db.batch([
    db.update(courses).set({ title: C2_TITLE }).where(eq(courses.id, c2.courseId)),
    db.update(lessons).set({ title: LESSON_TWO_TITLE }).where(eq(lessons.id, c1.lessons[1]!.id)),
  ]);
  c1Title = (await db
    .select({ title: courses.title })
    .from(courses)
    .where(eq(courses.id, c1.courseId))
    .get())!.title;

  // L1 completes all of course 1 on day 0 (12 vocabulary items: CEFR A1 overall).
  for (let i = 0; i < 12; i++) await send(l1, c1, Math.floor(i / 6), i % 6, at(i, 0));
  // L2 on day 1: three items of course 1 (one missed), then all of course 2.
  await send(l2, c1, 0, 0, at(0, 1));
  await send(l2, c1, 0, 1, at(1, 1), 0.4);
  await send(l2, c1, 0, 2, at(2, 1), 0.8);
  await send(l2, c2, 0, 0, at(3, 1), 1, 5);
  await send(l2, c2, 0, 1, at(4, 1), 1, 5);

  // Another institution's learner on the same course: never in this institution's exports.
  const other = await createTenant();
  await record(other.learner.token, [attempt(c1.items[0]!, { at: at(0, 1) })]);
}, 60_000);

const RECORDED_AT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

function activityRow(a: (typeof sent)[number]) {
  return {
    attempt_id: a.id,
    occurred_at: iso(a.at),
    user_id: a.user,
    course_id: a.course,
    lesson_id: a.lesson,
    training_item_id: a.item,
    skill: a.course === c1.courseId ? "vocabulary" : "grammar",
    cefr_level: "A1",
    score: String(a.score),
    correct: String(a.correct),
    duration_seconds: "30",
    xp_awarded: String(a.xp),
    recorded_at: expect.stringMatching(RECORDED_AT),
  };
}

const byTimeThenId = (x: (typeof sent)[number], y: (typeof sent)[number]) =>
  x.at - y.at || (x.id < y.id ? -1 : 1);

describe("activity export", () => {
  it("has one row per attempt of the institution, by time then id, every column as recorded", async () => {
    const { records, text, job, res } = await exportRecords(tenant.admin.token, { type: "activity" });
    expect(text.split("\r\n")[0]).toBe(
      "attempt_id,occurred_at,user_id,course_id,lesson_id,training_item_id,skill,cefr_level,score,correct,duration_seconds,xp_awarded,recorded_at",
    );
    expect(records).toEqual([...sent].sort(byTimeThenId).map(activityRow));
    expect(job).toMatchObject({
      row_count: 17,
      byte_size: new TextEncoder().encode(text).length,
      progress: 17,
    });
    expect(res.headers.get("Content-Length")).toBe(String(job.byte_size));
  });

  it.each([
    [
      "from",
      () => ({ from: new Date(at(0, 1)).toISOString() }),
      (a: (typeof sent)[number]) => a.at >= at(0, 1),
    ],
    [
      "from and to",
      () => ({ from: new Date(at(0, 1)).toISOString(), to: new Date(at(3, 1)).toISOString() }),
      (a: (typeof sent)[number]) => a.at >= at(0, 1) && a.at < at(3, 1),
    ],
    ["course_id", () => ({ course_id: c2.courseId }), (a: (typeof sent)[number]) => a.course === c2.courseId],
    ["user_ids", () => ({ user_ids: [l1.id] }), (a: (typeof sent)[number]) => a.user === l1.id],
  ])("filters by %s", async (_name, filters, keep) => {
    const { records, job } = await exportRecords(tenant.admin.token, { type: "activity", ...filters() });
    const expected = sent.filter(keep).sort(byTimeThenId).map(activityRow);
    expect(expected.length).toBeGreaterThan(0);
    expect(records).toEqual(expected);
    expect(job.filters).toMatchObject(
      Object.fromEntries(
        Object.entries(filters()).map(([k, v]) => [
          k,
          k === "from" || k === "to" ? iso(Date.parse(v as string)) : v,
        ]),
      ),
    );
  });

  it("rounds from and to up to the second, the precision of stored times", async () => {
    const { records } = await exportRecords(tenant.admin.token, {
      type: "activity",
      from: new Date(at(11, 0) + 1).toISOString(),
    });
    // The attempt at exactly at(11, 0) is before `from` (by 1 ms) and is left out.
    expect(records.map((r) => r.occurred_at)).not.toContain(iso(at(11, 0)));
    expect(records).toHaveLength(5);
  });
});

describe("learner_progress export", () => {
  function rows() {
    return [
      {
        user_id: l1.id,
        user_email: l1.email,
        user_name: L1_NAME,
        course_id: c1.courseId,
        course_title: c1Title,
        progress_percent: "100",
        lessons_completed: "2",
        lessons_total: "2",
        items_done: "12",
        items_total: "12",
        xp: "120",
        cefr_level: "A1",
        started_at: iso(at(0, 0)),
        completed_at: iso(at(11, 0)),
        last_activity_at: iso(at(11, 0)),
      },
      {
        user_id: l2.id,
        user_email: l2.email,
        user_name: `'${L2_NAME}`,
        course_id: c1.courseId,
        course_title: c1Title,
        progress_percent: "17",
        lessons_completed: "0",
        lessons_total: "2",
        items_done: "2",
        items_total: "12",
        xp: "20",
        cefr_level: "",
        started_at: iso(at(0, 1)),
        completed_at: "",
        last_activity_at: iso(at(2, 1)),
      },
      {
        user_id: l2.id,
        user_email: l2.email,
        user_name: `'${L2_NAME}`,
        course_id: c2.courseId,
        course_title: `'${C2_TITLE}`,
        progress_percent: "100",
        lessons_completed: "1",
        lessons_total: "1",
        items_done: "2",
        items_total: "2",
        xp: "10",
        cefr_level: "",
        started_at: iso(at(3, 1)),
        completed_at: iso(at(4, 1)),
        last_activity_at: iso(at(4, 1)),
      },
    ].sort((x, y) =>
      x.user_id < y.user_id ? -1 : x.user_id > y.user_id ? 1 : x.course_id < y.course_id ? -1 : 1,
    );
  }

  it("has one row per learner and course, by learner then course, with names quoted and formulas guarded", async () => {
    const { records, text } = await exportRecords(tenant.admin.token, { type: "learner_progress" });
    expect(records).toEqual(rows());
    // The raw text: RFC 4180 quoting of the name with a comma, quotes and a line break; the guard's quote inside quotes.
    expect(text).toContain(`,"Doe, ""Jo""\nSecond line",`);
    expect(text).toContain(`,"'=HYPERLINK(""http://evil.example"",""x"")",`);
    expect(text).toContain(`,"'-Minus, ""course""",`);
    expect(text.endsWith("\r\n")).toBe(true);
  });

  it.each([
    [
      "course_id",
      () => ({ course_id: c2.courseId }),
      (r: { course_id: string }) => r.course_id === c2.courseId,
    ],
    ["user_ids", () => ({ user_ids: [l2.id] }), (r: { user_id: string }) => r.user_id === l2.id],
    [
      "from (last activity)",
      () => ({ from: new Date(at(0, 1)).toISOString() }),
      (r: { user_id: string }) => r.user_id === l2.id,
    ],
    [
      "to (last activity)",
      () => ({ to: new Date(at(0, 1)).toISOString() }),
      (r: { user_id: string }) => r.user_id === l1.id,
    ],
  ])("filters by %s", async (_name, filters, keep) => {
    const { records } = await exportRecords(tenant.admin.token, { type: "learner_progress", ...filters() });
    const expected = rows().filter(keep as (r: ReturnType<typeof rows>[number]) => boolean);
    expect(expected.length).toBeGreaterThan(0);
    expect(records).toEqual(expected);
  });
});

describe("completions export", () => {
  function rows() {
    const l1Rows = [
      {
        kind: "lesson",
        lesson_id: c1.lessons[0]!.id,
        lesson_title: "Lesson 1",
        started_at: iso(at(0, 0)),
        completed_at: iso(at(5, 0)),
        score: "1",
        xp: "",
      },
      {
        kind: "lesson",
        lesson_id: c1.lessons[1]!.id,
        lesson_title: `'${LESSON_TWO_TITLE}`,
        started_at: iso(at(6, 0)),
        completed_at: iso(at(11, 0)),
        score: "1",
        xp: "",
      },
      {
        kind: "course",
        lesson_id: "",
        lesson_title: "",
        started_at: iso(at(0, 0)),
        completed_at: iso(at(11, 0)),
        score: "1",
        xp: "120",
      },
    ].map((r) => ({
      user_id: l1.id,
      user_email: l1.email,
      user_name: L1_NAME,
      course_id: c1.courseId,
      course_title: c1Title,
      ...r,
    }));
    const l2Rows = [
      {
        kind: "lesson",
        lesson_id: c2.lessons[0]!.id,
        lesson_title: "Lesson 1",
        started_at: iso(at(3, 1)),
        completed_at: iso(at(4, 1)),
        score: "1",
        xp: "",
      },
      {
        kind: "course",
        lesson_id: "",
        lesson_title: "",
        started_at: iso(at(3, 1)),
        completed_at: iso(at(4, 1)),
        score: "1",
        xp: "10",
      },
    ].map((r) => ({
      user_id: l2.id,
      user_email: l2.email,
      user_name: `'${L2_NAME}`,
      course_id: c2.courseId,
      course_title: `'${C2_TITLE}`,
      ...r,
    }));
    const ordered = l1.id < l2.id ? [...l1Rows, ...l2Rows] : [...l2Rows, ...l1Rows];
    // Column order of the file.
    return ordered.map((r) => ({
      kind: r.kind,
      user_id: r.user_id,
      user_email: r.user_email,
      user_name: r.user_name,
      course_id: r.course_id,
      course_title: r.course_title,
      lesson_id: r.lesson_id,
      lesson_title: r.lesson_title,
      started_at: r.started_at,
      completed_at: r.completed_at,
      score: r.score,
      xp: r.xp,
    }));
  }

  it("has a row per completed lesson (by position) then one for the completed course, learner by learner", async () => {
    const { records, text } = await exportRecords(tenant.admin.token, { type: "completions" });
    expect(Object.keys(records[0]!)).toEqual([
      "kind",
      "user_id",
      "user_email",
      "user_name",
      "course_id",
      "course_title",
      "lesson_id",
      "lesson_title",
      "started_at",
      "completed_at",
      "score",
      "xp",
    ]);
    expect(records).toEqual(rows());
    expect(text).toContain(",'@lesson two,");
  });

  it.each([
    [
      "course_id",
      () => ({ course_id: c1.courseId }),
      (r: { course_id: string }) => r.course_id === c1.courseId,
    ],
    ["user_ids", () => ({ user_ids: [l2.id] }), (r: { user_id: string }) => r.user_id === l2.id],
    [
      "from and to (completion time)",
      () => ({ from: new Date(at(5, 0)).toISOString(), to: new Date(at(11, 0)).toISOString() }),
      (r: { completed_at: string }) => r.completed_at === iso(at(5, 0)),
    ],
  ])("filters by %s", async (_name, filters, keep) => {
    const { records } = await exportRecords(tenant.admin.token, { type: "completions", ...filters() });
    const expected = rows().filter(keep as (r: ReturnType<typeof rows>[number]) => boolean);
    expect(expected.length).toBeGreaterThan(0);
    expect(records).toEqual(expected);
  });
});

describe("an institution without activity", () => {
  it("gets a file with the header row only", async () => {
    const empty = await createTenant();
    for (const type of ["activity", "learner_progress", "completions"]) {
      const { records, text, job } = await exportRecords(empty.admin.token, { type });
      expect(records).toEqual([]);
      expect(text.split("\r\n")).toHaveLength(2);
      expect(job).toMatchObject({ row_count: 0, byte_size: text.length });
    }
  });
});
