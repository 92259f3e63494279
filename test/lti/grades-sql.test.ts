import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { ltiLaunches, ltiPassbacks, outboxEvents } from "../../src/db/schema";
import {
  COMPLETION_LAUNCHES_SQL,
  type CompletionLaunchRow,
  INSERT_COMPLETION_PASSBACKS_SQL,
  UNSENT_PASSBACKS_SQL,
  type UnsentPassbackRow,
} from "../../src/domains/lti/grades/sql";
import { database } from "../../src/platform/db";

// Each statement of src/domains/lti/grades/sql.ts against the test database, fixtures through drizzle.

const db = () => database(env.DB);
let sequence = 0;
const tag = () => `${Date.now().toString(36)}_${++sequence}`;
const NOW = "2026-11-01T00:00:00Z";
const AGS = {
  lineitem: "https://lms.example/items/1",
  scope: ["https://purl.imsglobal.org/spec/lti-ags/scope/score"],
};

async function completion(type: "lesson.completed" | "course.completed", target: string, userId: string) {
  const id = `evt_gsql_${tag()}`;
  await db()
    .insert(outboxEvents)
    .values({
      id,
      type,
      institutionId: "ins_gsql",
      userId,
      payload: type === "lesson.completed" ? { lesson_id: target, score: 0.5 } : { course_id: target },
      createdAt: NOW,
    });
  return id;
}

async function launch(fields: Partial<typeof ltiLaunches.$inferInsert>) {
  const id = fields.id ?? `ltl_gsql_${tag()}`;
  await db()
    .insert(ltiLaunches)
    .values({
      id,
      institutionId: "ins_gsql",
      consumerId: "ltc_gsql",
      status: "succeeded",
      targetType: "lesson",
      ags: AGS,
      createdAt: NOW,
      ...fields,
    });
  return id;
}

describe("COMPLETION_LAUNCHES_SQL", () => {
  it("matches a completion to its learner's newest gradable launch of that lesson, not other launches", async () => {
    const user = `usr_gsql_${tag()}`;
    const older = await launch({ id: `ltl_gsql_${user}_1`, userId: user, targetId: "les_1" });
    const newer = await launch({ id: `ltl_gsql_${user}_2`, userId: user, targetId: "les_1" });
    await launch({ userId: user, targetId: "les_2" });
    await launch({ userId: user, targetId: "les_1", status: "failed" });
    await launch({ userId: user, targetId: "les_1", ags: null });
    await launch({ userId: `usr_other_${tag()}`, targetId: "les_1" });
    const event = await completion("lesson.completed", "les_1", user);
    const { results } = await env.DB.prepare(COMPLETION_LAUNCHES_SQL)
      .bind(JSON.stringify([event]))
      .all<CompletionLaunchRow>();
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({
      event_id: event,
      type: "lesson.completed",
      institution_id: "ins_gsql",
    });
    expect(older < newer).toBe(true);
    expect(results[0]?.launch_id).toBe(newer);
    expect(JSON.parse(results[0]?.ags ?? "{}")).toEqual(AGS);
    expect(JSON.parse(results[0]?.payload ?? "{}")).toEqual({ lesson_id: "les_1", score: 0.5 });
  });

  it("matches a course completion to a course launch", async () => {
    const user = `usr_gsql_${tag()}`;
    const course = await launch({ userId: user, targetType: "course", targetId: "crs_1" });
    const event = await completion("course.completed", "crs_1", user);
    const { results } = await env.DB.prepare(COMPLETION_LAUNCHES_SQL)
      .bind(JSON.stringify([event]))
      .all<CompletionLaunchRow>();
    expect(results.map((r) => r.launch_id)).toEqual([course]);
  });
});

describe("INSERT_COMPLETION_PASSBACKS_SQL and UNSENT_PASSBACKS_SQL", () => {
  it("inserts pending untried passbacks once per (launch, event), and reads back the untried ones", async () => {
    const user = `usr_gsql_${tag()}`;
    const launchId = await launch({ userId: user, targetId: "les_3" });
    const event = await completion("lesson.completed", "les_3", user);
    const rows = [[`lpb_gsql_${tag()}`, launchId, "ins_gsql", event, 0.5, NOW]];
    const first = await env.DB.prepare(INSERT_COMPLETION_PASSBACKS_SQL).bind(JSON.stringify(rows), NOW).run();
    expect(first.meta.changes).toBe(1);
    const twin = [[`lpb_gsql_${tag()}`, launchId, "ins_gsql", event, 0.5, NOW]];
    const second = await env.DB.prepare(INSERT_COMPLETION_PASSBACKS_SQL)
      .bind(JSON.stringify(twin), NOW)
      .run();
    expect(second.meta.changes).toBe(0);
    const [row] = await db().select().from(ltiPassbacks).where(eq(ltiPassbacks.eventId, event));
    expect(row).toMatchObject({
      id: rows[0]?.[0],
      launchId,
      scoreFraction: 0.5,
      activityProgress: "Completed",
      gradingProgress: "FullyGraded",
      status: "pending",
      attemptCount: 0,
      createdAt: NOW,
    });

    const unsent = () =>
      env.DB.prepare(UNSENT_PASSBACKS_SQL)
        .bind(JSON.stringify([event]))
        .all<UnsentPassbackRow>();
    expect((await unsent()).results).toEqual([{ id: rows[0]?.[0] }]);
    await db().update(ltiPassbacks).set({ attemptCount: 1 }).where(eq(ltiPassbacks.eventId, event));
    expect((await unsent()).results).toEqual([]);
  });
});
