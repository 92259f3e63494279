import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { ltiPassbacks } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { callJson } from "../helpers/api";
import { createPublishedCourse } from "../helpers/progress-fixture";
import { createTenant } from "../helpers/tenants";
import { runQueue, waitUntil } from "../webhooks/support";
import { AGS_CLAIM, LTI, launch, registerPlatform, SCORE_SCOPE } from "./support";

/** A learner launched into a lesson (or its course), then completing it with the launch's session. */
async function completeLaunchedLesson(target: "lesson" | "course", claims: Record<string, unknown> = {}) {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  await reg.platform.learnToolKeys();
  await reg.platform.configure({ line_item_maximum: 40 });
  const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 2 });
  const custom =
    target === "lesson" ? { lingua_lesson_id: course.lessons[0]!.id } : { lingua_course_id: course.courseId };
  const launched = await launch(reg, { [`${LTI}custom`]: custom, ...claims });
  expect(launched.res.status).toBe(200);
  const occurredAt = new Date(Date.now() - 60_000).toISOString();
  const attempts = course.items.map((id, i) => ({
    id: crypto.randomUUID(),
    training_item_id: id,
    score: i === 0 ? 1 : 0.5,
    correct: true,
    duration_seconds: 20,
    occurred_at: occurredAt,
  }));
  const recorded = await callJson("/api/progress/attempts", {
    token: launched.body.session.token,
    body: { attempts },
  });
  expect(recorded.res.status).toBe(200);
  const event = (recorded.body.summary.events as { id: string; type: string }[]).find(
    (e) => e.type === `${target}.completed`,
  );
  if (!event) throw new Error(`no ${target}.completed in ${JSON.stringify(recorded.body.summary.events)}`);
  return { tenant, reg, launch: launched.body.launch, event };
}

it("a completed lesson sends its score, scaled to the line item, once however often the event comes", async () => {
  const { tenant, reg, launch: l, event } = await completeLaunchedLesson("lesson");
  const [score] = await waitUntil(async () => {
    const got = (await reg.platform.state()).score_requests;
    return got.length > 0 ? got : null;
  });
  expect(score!.body).toMatchObject({
    userId: l.sub,
    scoreGiven: 30,
    scoreMaximum: 40,
    activityProgress: "Completed",
    gradingProgress: "FullyGraded",
  });
  const passback = await waitUntil(async () => {
    const { body } = await callJson(`/api/integrations/lti-launches/${l.id}`, { token: tenant.admin.token });
    return body.passbacks[0]?.status === "succeeded" ? body.passbacks[0] : null;
  });
  expect(passback).toMatchObject({ source: "automatic", event_id: event.id, score_given: null });

  // The event delivered again, twice in one batch and once more: no second passback, no second score.
  await runQueue("lingua-events", [{ event_ids: [event.id] }, { event_ids: [event.id] }]);
  await runQueue("lingua-events", [{ event_ids: [event.id] }]);
  await new Promise((r) => setTimeout(r, 1500));
  expect(await database(env.DB).$count(ltiPassbacks, eq(ltiPassbacks.launchId, l.id))).toBe(1);
  expect((await reg.platform.state()).score_requests).toHaveLength(1);
});

it("a completed course sends full marks for the launch that targets the course", async () => {
  const { reg, launch: l } = await completeLaunchedLesson("course");
  const [score] = await waitUntil(async () => {
    const got = (await reg.platform.state()).score_requests;
    return got.length > 0 ? got : null;
  });
  expect(score!.body).toMatchObject({ userId: l.sub, scoreGiven: 40, scoreMaximum: 40 });
});

it("a completion for a launch whose line item was not a URL makes no passback (not gradable) and sends nothing", async () => {
  const {
    reg,
    launch: l,
    event,
  } = await completeLaunchedLesson("lesson", {
    [AGS_CLAIM]: { scope: [SCORE_SCOPE], lineitem: "not a url" },
  });
  expect(l.ags).toEqual({ scope: [SCORE_SCOPE] });
  // The event handed to the subscribers again, synchronously: still nothing to send.
  await runQueue("lingua-events", [{ event_ids: [event.id] }]);
  await new Promise((r) => setTimeout(r, 1000));
  expect(await database(env.DB).$count(ltiPassbacks, eq(ltiPassbacks.launchId, l.id))).toBe(0);
  expect((await reg.platform.state()).score_requests).toHaveLength(0);
});
