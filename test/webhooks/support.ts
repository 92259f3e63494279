import { callJson } from "../helpers/api";
import { createPublishedCourse } from "../helpers/progress-fixture";
import type { TestUser } from "../helpers/tenants";

export async function createWebhook(admin: TestUser, body: Record<string, unknown>) {
  const { res, body: created } = await callJson("/api/integrations/webhooks", { token: admin.token, body });
  if (res.status !== 201) throw new Error(`webhook creation failed: ${res.status} ${JSON.stringify(created)}`);
  return created as { id: string; secret: string; [key: string]: unknown };
}

/** A one-lesson course, and a learner's attempts at every item of it: one `lesson.completed`. */
export async function completeALesson(learner: TestUser, itemsPerBlock = 2) {
  const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock, skills: ["reading"], levels: ["A1"], xp: 10 });
  const occurredAt = new Date(Date.now() - 60_000).toISOString();
  const attempts = course.items.map((id) => ({ id: crypto.randomUUID(), training_item_id: id, score: 1, correct: true, duration_seconds: 20, occurred_at: occurredAt }));
  const { res, body } = await callJson("/api/progress/attempts", { token: learner.token, body: { attempts } });
  if (res.status !== 200) throw new Error(`attempts failed: ${res.status} ${JSON.stringify(body)}`);
  return { course, events: body.summary.events as { id: string; type: string }[] };
}

export async function waitUntil<T>(probe: () => Promise<T | undefined | null | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
