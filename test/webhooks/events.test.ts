import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { outboxEvents } from "../../src/db/schema";
import { purgeOldEvents } from "../../src/domains/webhooks/sweep";
import { database } from "../../src/platform/db";
import { INTERNAL_EVENT_TYPES, INTERNAL_EVENTS_CONDITION } from "../../src/platform/events";
import { nowIso } from "../../src/platform/ids";
import { callJson } from "../helpers/api";
import { testContext } from "../helpers/context";
import { createTenant } from "../helpers/tenants";
import { completeALesson } from "./support";

it("lists the institution's events newest first, filtered by type and time, and nobody else's", async () => {
  const { admin, learner, institution } = await createTenant();
  const other = await createTenant();
  const { events } = await completeALesson(learner);
  await completeALesson(other.learner);
  const old = new Date(Date.now() - 31 * 86_400_000).toISOString().replace(/\.\d{3}Z$/, "Z");
  await database(env.DB).insert(outboxEvents).values({
    id: "evt_ancient",
    type: "lesson.completed",
    institutionId: institution.id,
    payload: {},
    createdAt: old,
    fannedOutAt: old,
  });

  const all = await callJson("/api/integrations/events?per_page=100", { token: admin.token });
  expect(all.res.status).toBe(200);
  expect(all.body.data.map((e: any) => e.id).sort()).toEqual(events.map((e) => e.id).sort());
  const times = all.body.data.map((e: any) => `${e.created_at}|${e.id}`);
  expect([...times].sort().reverse()).toEqual(times);

  const lessons = await callJson("/api/integrations/events?type=lesson.completed", { token: admin.token });
  expect(lessons.body.data).toHaveLength(1);
  expect(lessons.body.data[0]).toMatchObject({ type: "lesson.completed", data: { user_id: learner.id } });
  expect(Object.keys(lessons.body.data[0])).toEqual(["id", "type", "created_at", "data"]);

  const future = new Date(Date.now() + 60_000).toISOString();
  expect(
    (await callJson(`/api/integrations/events?from=${future}`, { token: admin.token })).body.data,
  ).toEqual([]);
  const past = new Date(Date.now() - 3_600_000).toISOString();
  expect((await callJson(`/api/integrations/events?to=${past}`, { token: admin.token })).body.data).toEqual(
    [],
  );

  const bad = await callJson(`/api/integrations/events?type=nope&from=${future}&to=${past}`, {
    token: admin.token,
  });
  expect(bad.res.status).toBe(422);
  expect(bad.body.errors.map((e: any) => e.path).sort()).toEqual(["type"]);
  const backwards = await callJson(`/api/integrations/events?from=${future}&to=${past}`, {
    token: admin.token,
  });
  expect(backwards.res.status).toBe(422);
  expect(backwards.body.errors[0].path).toBe("to");

  const theirs = (await callJson("/api/integrations/events", { token: other.admin.token })).body.data[0];
  expect((await callJson(`/api/integrations/events/${theirs.id}`, { token: admin.token })).res.status).toBe(
    404,
  );
  expect((await callJson("/api/integrations/events/evt_ancient", { token: admin.token })).res.status).toBe(
    404,
  );
  expect((await callJson("/api/integrations/events", { token: learner.token })).res.status).toBe(403);
});

it("the sweep deletes events after 30 days, and internal ones a day after every subscriber took them", async () => {
  const { institution } = await createTenant();
  const now = Date.parse("2026-06-15T12:00:00Z");
  const at = (hoursAgo: number) => nowIso(now - hoursAgo * 3_600_000);
  const event = (id: string, type: string, hoursAgo: number, dispatched: boolean) => ({
    id,
    type,
    institutionId: institution.id,
    payload: { user_id: "usr_x", attempt_ids: [crypto.randomUUID()] },
    createdAt: at(hoursAgo),
    dispatchedAt: dispatched ? at(hoursAgo - 0.01) : null,
  });
  const ids = (suffix: string) => `evt_purge_${suffix}_${institution.id}`;
  await database(env.DB)
    .insert(outboxEvents)
    .values([
      event(ids("internal_day_old"), "attempts.recorded", 24.5, true),
      event(ids("internal_undispatched"), "attempts.recorded", 24.5, false),
      event(ids("internal_recent"), "attempts.recorded", 23.5, true),
      event(ids("public_day_old"), "lesson.completed", 24.5, true),
      event(ids("public_month_old"), "lesson.completed", 30 * 24 + 1, true),
    ]);

  await purgeOldEvents(testContext({ now: () => now }));

  const left = await database(env.DB)
    .select({ id: outboxEvents.id })
    .from(outboxEvents)
    .where(eq(outboxEvents.institutionId, institution.id));
  expect(left.map((r) => r.id).sort()).toEqual(
    [ids("internal_undispatched"), ids("internal_recent"), ids("public_day_old")].sort(),
  );
});

it("the internal events' partial index is the condition the purge repeats, over every internal type", async () => {
  const index = await env.DB.prepare(
    "SELECT sql FROM sqlite_schema WHERE name = 'outbox_events_internal_idx'",
  ).first<{
    sql: string;
  }>();
  expect(index?.sql).toMatch(new RegExp(`WHERE ${INTERNAL_EVENTS_CONDITION}$`));
  const internal = Object.keys(INTERNAL_EVENT_TYPES).map((t) => `type = '${t}'`);
  expect(internal.join(" OR ")).toBe(INTERNAL_EVENTS_CONDITION);
});
