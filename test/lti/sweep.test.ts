import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { eq, inArray } from "drizzle-orm";
import { expect, it } from "vitest";
import { ltiLaunches, ltiPassbacks, ltiStates } from "../../src/db/schema";
import { requeueStalledPassbacks } from "../../src/domains/lti/grades/sweep";
import { sweepLti } from "../../src/domains/lti/launch/sweep";
import { database } from "../../src/platform/db";
import { advanceClock, clockNow, resetClock } from "../../src/platform/service/clock";
import { runSweeps } from "../../src/scheduled";
import { HeldQueue } from "../exports/support";
import { callJson } from "../helpers/api";
import { testContext } from "../helpers/context";
import { createTenant } from "../helpers/tenants";
import { runQueue, waitUntil } from "../webhooks/support";
import { launch, login, registerPlatform } from "./support";

it("the sweep deletes long-expired login states and queues passbacks whose message was lost", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  await reg.platform.learnToolKeys();
  const launched = await launch(reg);
  const { state } = await login(reg);
  const db = database(env.DB);
  await db
    .update(ltiStates)
    .set({ expiresAt: Date.now() - 2 * 3_600_000 })
    .where(eq(ltiStates.state, state));
  // A passback made and never queued (its message lost), twenty minutes ago.
  const old = new Date(Date.now() - 20 * 60_000).toISOString().replace(/\.\d{3}Z$/, "Z");
  await db.insert(ltiPassbacks).values({
    id: "lpb_lost",
    launchId: launched.body.launch.id,
    institutionId: tenant.institution.id,
    scoreGiven: 1,
    scoreMaximum: 2,
    activityProgress: "Completed",
    gradingProgress: "FullyGraded",
    scoredAt: old,
    status: "pending",
    attemptCount: 0,
    createdAt: old,
  });

  // A refused launch from 31 days ago leaves the log; the accepted one stays.
  const refused = await launch(reg, { "https://purl.imsglobal.org/spec/lti/claim/version": "1.0" });
  await db
    .update(ltiLaunches)
    .set({ createdAt: new Date(Date.now() - 31 * 86_400_000).toISOString().replace(/\.\d{3}Z$/, "Z") })
    .where(eq(ltiLaunches.id, refused.body.launch_id));

  await sweepLti(testContext());
  expect(await requeueStalledPassbacks(testContext())).toBe(1);
  const left = await db
    .select({ id: ltiLaunches.id })
    .from(ltiLaunches)
    .where(inArray(ltiLaunches.id, [refused.body.launch_id, launched.body.launch.id]));
  expect(left).toEqual([{ id: launched.body.launch.id }]);
  expect(await db.$count(ltiStates, eq(ltiStates.state, state))).toBe(0);
  const sent = await waitUntil(async () => {
    const { body } = await callJson(`/api/integrations/lti-launches/${launched.body.launch.id}`, {
      token: tenant.admin.token,
    });
    return body.passbacks[0]?.status === "succeeded" ? body.passbacks[0] : null;
  });
  expect(sent).toMatchObject({ id: "lpb_lost", score_given: 1, score_maximum: 2, attempt_count: 1 });
  expect(await requeueStalledPassbacks(testContext())).toBe(0);
});

it("a grade sent again with its Idempotency-Key replays the answer and sends nothing", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  await reg.platform.learnToolKeys();
  const launched = await launch(reg);
  const send = () =>
    callJson(`/api/lti/grade-passback/${launched.body.launch.id}`, {
      token: tenant.admin.token,
      headers: { "Idempotency-Key": "grade-1" },
      body: { score_given: 1, score_maximum: 1 },
    });
  const first = await send();
  const again = await send();
  expect(first.res.status).toBe(200);
  expect(again.res.status).toBe(200);
  expect(again.res.headers.get("Idempotent-Replayed")).toBe("true");
  expect(again.body).toEqual(first.body);
  expect((await reg.platform.state()).score_requests).toHaveLength(1);
});

it("a passback retry whose message is lost is sent again by the minute sweep about a minute after it was due; the score reaches the platform once, and the late original sends nothing", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  await reg.platform.learnToolKeys();
  const launched = await launch(reg);
  await reg.platform.scores([{ status: 503 }]);
  const dropped = new HeldQueue();
  try {
    const { res, body } = await callJson(`/api/lti/grade-passback/${launched.body.launch.id}`, {
      token: tenant.admin.token,
      body: { score_given: 3, score_maximum: 4 },
      env: { LTI_PASSBACK_QUEUE: dropped as unknown as Queue },
    });
    expect(res.status).toBe(202);
    expect(body).toMatchObject({ status: "retrying", attempt_count: 1 });
    const lost = dropped.take(); // the retry's message, never delivered
    expect(lost).toEqual({ passback_id: body.id });

    const queue = new HeldQueue();
    const bindings = { ...env, LTI_PASSBACK_QUEUE: queue as unknown as Queue };
    const sweep = async () => {
      const ctx = createExecutionContext();
      await runSweeps(bindings, ctx, clockNow());
      await waitOnExecutionContext(ctx);
    };
    await sweep();
    expect(queue.messages).toEqual([]);
    advanceClock(2 * 60_000);
    await Promise.all([sweep(), sweep()]);
    expect(queue.messages).toEqual([lost]);
    expect((await runQueue("lingua-lti-passbacks", queue.messages)).explicitAcks).toHaveLength(1);
    const row = await database(env.DB).select().from(ltiPassbacks).where(eq(ltiPassbacks.id, body.id)).get();
    expect(row).toMatchObject({ status: "succeeded", attemptCount: 2, platformStatus: 200 });

    const late = await runQueue("lingua-lti-passbacks", [lost]);
    expect(late.explicitAcks).toHaveLength(1);
    expect((await reg.platform.state()).score_requests.map((s) => s.status)).toEqual([503, 200]);
  } finally {
    resetClock();
  }
});
