import {
  createExecutionContext,
  createScheduledController,
  env,
  waitOnExecutionContext,
} from "cloudflare:test";
import { expect, it } from "vitest";
import worker from "../../src/index";

it("the scheduled sweep deletes idempotency keys past their 24 hours and keeps live ones", async () => {
  const now = Date.now();
  const insert = env.DB.prepare(
    "INSERT INTO idempotency_keys (scope, key, method, path, request_hash, locked_until, created_at, expires_at) VALUES ('user:x', ?, 'POST', '/p', 'h', 0, ?, ?)",
  );
  await env.DB.batch([
    insert.bind("old", now - 2 * 86_400_000, now - 86_400_000),
    insert.bind("live", now, now + 86_400_000),
  ]);
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime: now, cron: "* * * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
  const { results } = await env.DB.prepare("SELECT key FROM idempotency_keys WHERE scope = 'user:x'").all<{
    key: string;
  }>();
  expect(results.map((r) => r.key)).toEqual(["live"]);
});
