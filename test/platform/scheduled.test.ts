import {
  createExecutionContext,
  createScheduledController,
  env,
  waitOnExecutionContext,
} from "cloudflare:test";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { idempotencyKeys } from "../../src/db/schema";
import worker from "../../src/index";
import { database } from "../../src/platform/db";

it("the scheduled sweep deletes idempotency keys past their 24 hours and keeps live ones", async () => {
  const now = Date.now();
  const key = { scope: "user:x", method: "POST", path: "/p", requestHash: "h", lockedUntil: 0 };
  await database(env.DB)
    .insert(idempotencyKeys)
    .values([
      { ...key, key: "old", createdAt: now - 2 * 86_400_000, expiresAt: now - 86_400_000 },
      { ...key, key: "live", createdAt: now, expiresAt: now + 86_400_000 },
    ]);
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime: now, cron: "* * * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
  const results = await database(env.DB)
    .select({ key: idempotencyKeys.key })
    .from(idempotencyKeys)
    .where(eq(idempotencyKeys.scope, "user:x"));
  expect(results.map((r) => r.key)).toEqual(["live"]);
});
