import { env } from "cloudflare:test";
import { eq, inArray } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import validateStatement from "xapi-validation";
import {
  attempts,
  courses,
  courseTags,
  ITEM_TYPES,
  lessons,
  trainingItems,
  trainings,
  users,
} from "../../src/db/schema";
import { INTERACTION_TYPES } from "../../src/domains/xapi/statements/build";
import { type BuiltStatement, buildStatements, type Fact } from "../../src/domains/xapi/statements/index";
import { database } from "../../src/platform/db";
import type { ServiceContext } from "../../src/platform/service/context";
import { callJson } from "../helpers/api";
import { createCourse } from "../helpers/catalog";
import { testContext } from "../helpers/context";
import { createTenant, type Tenant } from "../helpers/tenants";

const db = () => database(env.DB);
const BASE = "https://api.lingua.example";
const PROFILE = `${BASE}/xapi/profile`;
const V5 = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO_DURATION = /^P(?=\d|T\d)(\d+Y)?(\d+M)?(\d+[DW])?(T(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$/;
const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** Learning Locker's rule set: every problem with the statement, none when it is valid. */
function problems(statement: unknown): string[] {
  return validateStatement(statement).map(
    (w: any) => `${w.path?.join(".")}: ${w.message ?? w.constructor.name}`,
  );
}

/** Every language map in a statement: verb display, names and descriptions of every activity. */
function languageMaps(s: any): Record<string, string>[] {
  const activities = [
    s.object,
    ...(s.context?.contextActivities?.parent ?? []),
    ...(s.context?.contextActivities?.grouping ?? []),
  ];
  return [
    s.verb.display,
    ...activities.flatMap((a: any) => [a.definition.name, a.definition.description].filter(Boolean)),
  ];
}

/** A test context whose D1 counts its round trips: each batch, and each statement run on its own. */
function countingContext() {
  let trips = 0;
  const real = env.DB;
  const d1 = new Proxy(real, {
    get(target, property) {
      if (property === "batch")
        return (statements: D1PreparedStatement[]) => {
          trips += 1;
          return target.batch(statements);
        };
      if (property === "prepare")
        return (query: string) =>
          new Proxy(target.prepare(query), {
            get(statement, name) {
              const value = Reflect.get(statement, name);
              if (typeof value !== "function") return value;
              if (["all", "raw", "first", "run"].includes(String(name)))
                return (...args: unknown[]) => {
                  trips += 1;
                  return value.apply(statement, args);
                };
              return value.bind(statement);
            },
          });
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const base = testContext();
  const ctx: ServiceContext = {
    env: base.env,
    d1,
    db: database(d1),
    database: "DB",
    get home() {
      return { db: this.db, d1 };
    },
    config: base.config,
    requestId: base.requestId,
    now: () => base.now(),
    waitUntil: (p) => base.waitUntil(p),
  };
  return { ctx, roundTrips: () => trips };
}

interface World {
  tenant: Tenant;
  learnerName: string;
  course: Awaited<ReturnType<typeof createCourse>>;
  /** One recorded attempt per item type. */
  attempts: Map<string, typeof attempts.$inferSelect>;
  items: Map<string, typeof trainingItems.$inferSelect>;
  facts: Fact[];
}

let world: World;

beforeAll(async () => {
  const tenant = await createTenant();
  const learnerName = "Ana María Pérez";
  await db().update(users).set({ name: learnerName }).where(eq(users.id, tenant.learner.id));
  // 3 blocks × 3 items = 9 items a lesson: the generator deals each lesson every one of the 9 item types.
  const course = await createCourse({ lessons: 2, blocksPerLesson: 3, itemsPerBlock: 3, language: "es" });
  const itemRows = await db().select().from(trainingItems).where(inArray(trainingItems.id, course.itemIds));
  const byType = new Map<string, typeof trainingItems.$inferSelect>();
  for (const item of itemRows) if (!byType.has(item.type)) byType.set(item.type, item);
  expect([...byType.keys()].sort()).toEqual([...ITEM_TYPES].sort());

  // Recorded through the API, as a learner would.
  const sent = [...byType.values()].map((item, i) => ({
    id: crypto.randomUUID(),
    training_item_id: item.id,
    score: [1, 0.5, 0.875, 0][i % 4],
    correct: i % 4 !== 3,
    duration_seconds: [30, 0, 125, 3725][i % 4],
    occurred_at: new Date(Date.now() - 600_000 + i * 1000).toISOString(),
  }));
  const { res, body } = await callJson("/api/progress/attempts", {
    token: tenant.learner.token,
    body: { attempts: sent },
  });
  expect(res.status, JSON.stringify(body)).toBe(200);
  const rows = await db()
    .select()
    .from(attempts)
    .where(
      inArray(
        attempts.id,
        sent.map((a) => a.id),
      ),
    );
  const attemptsByType = new Map<string, typeof attempts.$inferSelect>();
  for (const row of rows) {
    const item = itemRows.find((i) => i.id === row.trainingItemId)!;
    attemptsByType.set(item.type, row);
  }
  const userId = tenant.learner.id;
  const lessonId = course.lessonIds[0]!;
  const at = "2026-11-20T10:15:00Z";
  const facts: Fact[] = [
    ...[...attemptsByType.values()].map((attempt) => ({ verb: "answered" as const, attempt })),
    { verb: "progressed", userId, lessonId, courseId: course.id, itemsDone: 2, itemsTotal: 6, at },
    { verb: "completed", object: "lesson", userId, lessonId, courseId: course.id, score: 0.8333333, at },
    { verb: "completed", object: "course", userId, courseId: course.id, at },
    { verb: "mastered", userId, skill: "reading", level: "B1", at },
    { verb: "mastered", userId, skill: "overall", level: "A2", at },
    { verb: "earned", userId, code: "first_lesson", name: "Lesson learned", at },
  ];
  world = { tenant, learnerName, course, attempts: attemptsByType, items: byType, facts };
});

async function build(endpointId: string, actorFormat: "account" | "mbox" = "account", facts = world.facts) {
  return buildStatements(testContext(), { id: endpointId, actorFormat }, facts);
}

describe("buildStatements: every kind of statement is valid xAPI", () => {
  it("builds one statement per fact, in order, each valid by Learning Locker's rules (account actor)", async () => {
    const built = await build("xep_account");
    expect(built.map((b) => b.verb)).toEqual(world.facts.map((f) => f.verb));
    for (const b of built) expect(problems(b.statement), JSON.stringify(b.statement)).toEqual([]);
  });

  it("…and with the mbox actor", async () => {
    const built = await build("xep_mbox", "mbox");
    for (const b of built) expect(problems(b.statement), JSON.stringify(b.statement)).toEqual([]);
  });

  it("sends exactly each statement's JSON: its text, assembled from shared parts, is JSON.stringify's for every kind", async () => {
    // Built twice in one offer and across offers and actor formats: the parts shared between
    // statements (actor, verb, activity, context) are serialised once, and must read the same.
    const facts = [...world.facts, ...world.facts];
    for (const format of ["account", "mbox", "account"] as const) {
      const built = await build(`xep_text_${format}`, format, facts);
      expect(built).toHaveLength(facts.length);
      for (const b of built) {
        expect(b.body).toBe(JSON.stringify(b.statement));
        expect(problems(JSON.parse(b.body))).toEqual([]);
      }
    }
  });

  it("the validator is not a rubber stamp: it refuses what a strict LRS refuses", () => {
    const base = {
      id: "3ebd7d7c-6d06-5f2f-93e5-0baf8a898fa4",
      actor: { objectType: "Agent", account: { homePage: BASE, name: "u" } },
      verb: { id: "http://adlnet.gov/expapi/verbs/answered", display: { "en-US": "answered" } },
      object: { objectType: "Activity", id: `${BASE}/xapi/activities/training-items/x` },
    };
    expect(problems(base)).toEqual([]);
    expect(problems({ ...base, result: { score: { scaled: 1.5 } } })).not.toEqual([]);
    expect(problems({ ...base, result: { duration: "30 seconds" } })).not.toEqual([]);
    expect(problems({ ...base, verb: { id: "answered", display: { "en-US": "answered" } } })).not.toEqual([]);
    expect(problems({ ...base, context: { language: "not a tag" } })).not.toEqual([]);
  });

  it("ids are UUID v5, the same on every call, different per endpoint and per fact", async () => {
    const [a, again, other] = await Promise.all([build("xep_1"), build("xep_1"), build("xep_2")]);
    expect(again.map((b) => b.id)).toEqual(a.map((b) => b.id));
    expect(again).toEqual(a);
    for (const b of a) {
      expect(b.id).toMatch(V5);
      expect((b.statement as any).id).toBe(b.id);
    }
    expect(new Set(a.map((b) => b.id)).size).toBe(a.length);
    const otherIds = new Set(other.map((b) => b.id));
    for (const b of a) expect(otherIds.has(b.id)).toBe(false);
    // The actor format does not change the id: the same fact is the same statement for the endpoint.
    expect((await build("xep_1", "mbox")).map((b) => b.id)).toEqual(a.map((b) => b.id));
  });

  it("sets no stored, authority or version; timestamps are RFC 3339 UTC; language maps are well-formed", async () => {
    for (const b of await build("xep_shape")) {
      const s = b.statement as any;
      expect(s).not.toHaveProperty("stored");
      expect(s).not.toHaveProperty("authority");
      expect(s).not.toHaveProperty("version");
      expect(s.timestamp).toMatch(RFC3339_UTC);
      expect(b.occurredAt).toBe(s.timestamp);
      expect(b.activityId).toBe(s.object.id);
      expect(s.context.platform).toBe("Lingua");
      for (const map of languageMaps(s)) {
        expect(Object.keys(map).length).toBeGreaterThan(0);
        for (const [tag, text] of Object.entries(map)) {
          expect(tag).toMatch(/^[a-z]{2,3}(-[A-Za-z0-9]+)*$/);
          expect(text.length).toBeGreaterThan(0);
        }
      }
    }
  });

  it("names the actor by an opaque account by default, by e-mail only with mbox", async () => {
    const [account] = await build("xep_a", "account");
    const [mbox] = await build("xep_a", "mbox");
    expect((account!.statement as any).actor).toEqual({
      objectType: "Agent",
      name: world.learnerName,
      account: { homePage: BASE, name: world.tenant.learner.id },
    });
    expect(JSON.stringify(account!.statement)).not.toContain(world.tenant.learner.email);
    expect((mbox!.statement as any).actor).toEqual({
      objectType: "Agent",
      name: world.learnerName,
      mbox: `mailto:${world.tenant.learner.email}`,
    });
  });
});

describe("buildStatements: what each statement says", () => {
  let byKind: Map<string, any>;
  beforeAll(async () => {
    const built = await build("xep_kinds");
    byKind = new Map();
    world.facts.forEach((fact, i) => {
      const key =
        fact.verb === "answered"
          ? `answered:${world.items.get([...world.items.keys()].find((t) => world.attempts.get(t) === fact.attempt)!)!.type}`
          : fact.verb === "completed"
            ? `completed:${fact.object}`
            : fact.verb === "mastered"
              ? `mastered:${fact.skill}`
              : fact.verb;
      byKind.set(key, (built[i] as BuiltStatement).statement);
    });
  });

  it("an attempt: the item as a cmi.interaction of its type, its lesson and course, and the result", () => {
    const lesson = world.course.rows.lessons.find(
      (l) => l.id === world.attempts.get("vocabulary")!.lessonId,
    )!;
    for (const type of ITEM_TYPES) {
      const s = byKind.get(`answered:${type}`);
      const attempt = world.attempts.get(type)!;
      const item = world.items.get(type)!;
      expect(s.verb).toEqual({
        id: "http://adlnet.gov/expapi/verbs/answered",
        display: { "en-US": "answered" },
      });
      expect(s.object.id).toBe(`${BASE}/xapi/activities/training-items/${item.id}`);
      expect(s.object.definition.type).toBe("http://adlnet.gov/expapi/activities/cmi.interaction");
      expect(s.object.definition.interactionType).toBe(INTERACTION_TYPES[type]);
      expect(s.result.success).toBe(attempt.correct);
      expect(s.result.score.scaled).toBeGreaterThanOrEqual(0);
      expect(s.result.score.scaled).toBeLessThanOrEqual(1);
      expect(s.result.score).toEqual({
        scaled: attempt.score,
        raw: Math.round(attempt.score * 10_000) / 100,
        min: 0,
        max: 100,
      });
      expect(s.result.duration).toMatch(ISO_DURATION);
      // Attempts carry no response: none is sent.
      expect(s.result).not.toHaveProperty("response");
      expect(s.result.extensions).toEqual({ [`${PROFILE}#xp`]: attempt.xpAwarded });
      expect(s.timestamp).toBe(new Date(attempt.occurredAt).toISOString().replace(".000Z", "Z"));
      expect(s.context.language).toBe("es");
      expect(s.context.contextActivities.parent.map((a: any) => a.id)).toEqual([
        `${BASE}/xapi/activities/lessons/${attempt.lessonId}`,
      ]);
      expect(s.context.contextActivities.grouping).toEqual([
        {
          objectType: "Activity",
          id: `${BASE}/xapi/activities/courses/${world.course.id}`,
          definition: {
            name: { en: world.course.title },
            type: "http://adlnet.gov/expapi/activities/course",
          },
        },
      ]);
      expect(s.context.extensions).toEqual({
        [`${PROFILE}#cefr-level`]: item.cefrLevel,
        [`${PROFILE}#skill`]: item.skill,
      });
      // Never an answer, an option, a transcript or an example answer.
      const content = item.content as Record<string, unknown>;
      const secrets = [content.answer, content.transcript, content.example_answer, content.accepted_answers]
        .flat()
        .filter((v): v is string => typeof v === "string" && v.length > 3);
      const text = JSON.stringify(s);
      for (const secret of secrets) {
        if (typeof content.prompt === "string" && content.prompt.includes(secret)) continue;
        expect(text).not.toContain(secret);
      }
    }
    const vocabulary = byKind.get("answered:vocabulary");
    expect(vocabulary.object.definition.name.en).toMatch(/^Vocabulary: What does «.+» mean\?$/);
    expect(vocabulary.context.contextActivities.parent[0].definition).toEqual({
      name: { en: lesson.title },
      type: "http://adlnet.gov/expapi/activities/lesson",
    });
  });

  it("durations are ISO 8601: PT30S, PT0S, PT2M5S, PT1H2M5S", () => {
    const durations = [...world.attempts.keys()].map((type) => [
      world.attempts.get(type)!.durationSeconds,
      byKind.get(`answered:${type}`).result.duration,
    ]);
    const expected: Record<number, string> = { 30: "PT30S", 0: "PT0S", 125: "PT2M5S", 3725: "PT1H2M5S" };
    for (const [seconds, duration] of durations) expect(duration).toBe(expected[seconds as number]);
  });

  it("lesson progress: the lesson, completion false and cmi5's progress as an integer percentage", () => {
    const s = byKind.get("progressed");
    expect(s.verb.id).toBe("http://adlnet.gov/expapi/verbs/progressed");
    expect(s.object.id).toBe(`${BASE}/xapi/activities/lessons/${world.course.lessonIds[0]}`);
    expect(s.object.definition.type).toBe("http://adlnet.gov/expapi/activities/lesson");
    expect(s.result).toEqual({
      completion: false,
      extensions: { "https://w3id.org/xapi/cmi5/result/extensions/progress": 33 },
    });
    // The course is in grouping, as for every statement about something inside it; no parent.
    expect(s.context.contextActivities).toEqual({
      grouping: [
        {
          objectType: "Activity",
          id: `${BASE}/xapi/activities/courses/${world.course.id}`,
          definition: {
            name: { en: world.course.title },
            type: "http://adlnet.gov/expapi/activities/course",
          },
        },
      ],
    });
    expect(s.timestamp).toBe("2026-11-20T10:15:00Z");
  });

  it("a completed lesson: completion true and the lesson's score", () => {
    const s = byKind.get("completed:lesson");
    expect(s.verb).toEqual({
      id: "http://adlnet.gov/expapi/verbs/completed",
      display: { "en-US": "completed" },
    });
    expect(s.object.definition.type).toBe("http://adlnet.gov/expapi/activities/lesson");
    expect(s.result).toEqual({ completion: true, score: { scaled: 0.8333, raw: 83.33, min: 0, max: 100 } });
  });

  it("a completed course: the course, completion true, its language", () => {
    const s = byKind.get("completed:course");
    expect(s.object).toEqual({
      objectType: "Activity",
      id: `${BASE}/xapi/activities/courses/${world.course.id}`,
      definition: { name: { en: world.course.title }, type: "http://adlnet.gov/expapi/activities/course" },
    });
    expect(s.result).toEqual({ completion: true });
    expect(s.context).toEqual({ platform: "Lingua", language: "es" });
  });

  it("a CEFR level mastered: the level of the skill as an activity of the profile, level and skill in context", () => {
    const s = byKind.get("mastered:reading");
    expect(s.verb).toEqual({
      id: "http://adlnet.gov/expapi/verbs/mastered",
      display: { "en-US": "mastered" },
    });
    expect(s.object.id).toBe(`${BASE}/xapi/activities/cefr/reading/B1`);
    expect(s.object.definition.type).toBe(`${PROFILE}#proficiency-level`);
    expect(s.object.definition.name).toEqual({ en: "CEFR B1 (reading)" });
    expect(s.result).toEqual({ success: true, completion: true });
    expect(s.context.extensions).toEqual({
      [`${PROFILE}#cefr-level`]: "B1",
      [`${PROFILE}#skill`]: "reading",
    });
    expect(byKind.get("mastered:overall").object.id).toBe(`${BASE}/xapi/activities/cefr/overall/A2`);
  });

  it("an achievement: the profile's earned verb and the achievement as an activity", () => {
    const s = byKind.get("earned");
    expect(s.verb).toEqual({ id: `${PROFILE}#earned`, display: { "en-US": "earned" } });
    expect(s.object).toEqual({
      objectType: "Activity",
      id: `${BASE}/xapi/activities/achievements/first_lesson`,
      definition: { name: { en: "Lesson learned" }, type: `${PROFILE}#achievement` },
    });
    expect(s).not.toHaveProperty("result");
  });
});

describe("buildStatements: subjects that no longer exist", () => {
  it("leaves out a fact whose learner, item, lesson or course is gone, and keeps the others", async () => {
    const answered = world.facts.filter((f) => f.verb === "answered") as Extract<
      Fact,
      { verb: "answered" }
    >[];
    const first = answered[0]!.attempt;
    const at = "2026-11-20T10:15:00Z";
    const facts: Fact[] = [
      { verb: "answered", attempt: { ...first, id: "gone-user", userId: "usr_gone" } },
      { verb: "answered", attempt: { ...first, id: "gone-item", trainingItemId: "itm_gone" } },
      { verb: "answered", attempt: { ...first, id: "gone-lesson", lessonId: "les_gone" } },
      { verb: "completed", object: "course", userId: first.userId, courseId: "crs_gone", at },
      { verb: "earned", userId: "usr_gone", code: "first_steps", name: "First steps", at },
      { verb: "answered", attempt: first },
    ];
    const built = await build("xep_gone", "account", facts);
    expect(built.map((b) => (b.statement as any).object.id)).toEqual([
      `${BASE}/xapi/activities/training-items/${first.trainingItemId}`,
    ]);
  });

  it("a course deleted from the database takes its statements with it", async () => {
    const course = await createCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 1 });
    const userId = world.tenant.learner.id;
    const fact: Fact = {
      verb: "completed",
      object: "course",
      userId,
      courseId: course.id,
      at: "2026-11-20T10:15:00Z",
    };
    expect(await build("xep_del", "account", [fact])).toHaveLength(1);
    const d = db();
    await d.batch([
      d.delete(trainingItems).where(eq(trainingItems.courseId, course.id)),
      d.delete(trainings).where(eq(trainings.courseId, course.id)),
      d.delete(lessons).where(eq(lessons.courseId, course.id)),
      d.delete(courseTags).where(eq(courseTags.courseId, course.id)),
      d.delete(courses).where(eq(courses.id, course.id)),
    ]);
    expect(await build("xep_del", "account", [fact])).toEqual([]);
  });

  it("builds nothing from no facts, and many facts (more than one IN list holds) in one go", async () => {
    expect(await build("xep_none", "account", [])).toEqual([]);
    const fact = world.facts.find((f) => f.verb === "answered") as Extract<Fact, { verb: "answered" }>;
    const many: Fact[] = Array.from({ length: 250 }, (_, i) => ({
      verb: "answered",
      attempt: { ...fact.attempt, id: `many-${i}`, userId: i % 2 ? fact.attempt.userId : `usr_missing_${i}` },
    }));
    const { ctx, roundTrips } = countingContext();
    const built = await buildStatements(ctx, { id: "xep_many", actorFormat: "account" }, many);
    // 126 learners: two IN lists, read in the same batch.
    expect(roundTrips()).toBe(1);
    expect(built).toHaveLength(125);
    for (const b of built) expect(problems(b.statement)).toEqual([]);
  });
});
