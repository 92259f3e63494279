import { env } from "cloudflare:test";
import { expect, it } from "vitest";
import { outboxEvents } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { callJson } from "../helpers/api";
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
