import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { parse } from "csv-parse/sync";
import { eq, like } from "drizzle-orm";
import { expect } from "vitest";
import { exportJobs, outboxEvents } from "../../src/db/schema";
import worker from "../../src/index";
import { database } from "../../src/platform/db";
import { call, callJson } from "../helpers/api";

export const EXPORTS = "/api/integrations/exports";

/** POST an export request; returns the response and the job. */
export function requestExport(
  token: string,
  body: unknown,
  options: { headers?: Record<string, string>; bindings?: Partial<Cloudflare.Env> } = {},
) {
  return callJson(EXPORTS, { token, body, headers: options.headers, env: options.bindings });
}

export async function getJob(token: string, id: string) {
  const { res, body } = await callJson(`${EXPORTS}/${id}`, { token });
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}

/** Polls the job until it is completed or failed (the real queue delivers in the background). */
export async function waitForJob(token: string, id: string, timeoutMs = 20_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const job = await getJob(token, id);
    if (job.status === "completed" || job.status === "failed") return job;
    if (Date.now() > until) throw new Error(`export ${id} still ${job.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Requests an export through the real queue and waits for it. */
export async function exportAndWait(token: string, body: Record<string, unknown>) {
  const { res, body: job } = await requestExport(token, body);
  expect(res.status, JSON.stringify(job)).toBe(202);
  const done = await waitForJob(token, job.id);
  expect(done.status, JSON.stringify(done)).toBe("completed");
  return done;
}

/** Downloads a completed export and parses it with a CSV parser (header row → keys). */
export async function downloadRecords(token: string, id: string) {
  const res = await call(`${EXPORTS}/${id}/download`, { token });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return { res, text, records: parse(text, { columns: true }) as Record<string, string>[] };
}

export async function exportRecords(token: string, body: Record<string, unknown>) {
  const job = await exportAndWait(token, body);
  return { job, ...(await downloadRecords(token, job.id)) };
}

/**
 * A producer that keeps what is sent to it, so a test decides when (and how often, and with which
 * bindings) each exports message is delivered.
 */
export class HeldQueue {
  messages: unknown[] = [];
  async send(body: unknown) {
    this.messages.push(body);
  }
  async sendBatch(messages: Iterable<{ body: unknown }>) {
    for (const m of messages) this.messages.push(m.body);
  }
  take(): unknown {
    const next = this.messages.shift();
    if (next === undefined) throw new Error("no message held");
    return next;
  }
}

/** Bindings of this test file with a held exports queue and the given settings. */
export function heldBindings(
  queue: HeldQueue,
  overrides: Partial<Record<string, unknown>> = {},
): Cloudflare.Env {
  return { ...env, EXPORTS_QUEUE: queue as unknown as Queue, ...overrides } as Cloudflare.Env;
}

let deliveries = 0;

/** Runs the worker's queue handler on one message, as the queue would; returns its ack/retry outcome. */
export async function deliver(
  bindings: Cloudflare.Env,
  body: unknown,
  options: { queue?: string; attempts?: number } = {},
) {
  deliveries += 1;
  const batch = createMessageBatch(options.queue ?? "lingua-exports", [
    { id: `msg-${deliveries}`, timestamp: new Date(), attempts: options.attempts ?? 1, body },
  ]);
  // getQueueResult() reports that a message was retried, not with which delay: note it on the way.
  let retry: QueueRetryOptions | null = null;
  const message = batch.messages[0]!;
  const original = message.retry.bind(message);
  message.retry = (options?: QueueRetryOptions) => {
    retry = options ?? {};
    original(options);
  };
  const ctx = createExecutionContext();
  await worker.queue!(batch as MessageBatch<unknown>, bindings, ctx);
  const result = await getQueueResult(batch, ctx);
  expect(result.retryMessages.length === 1).toBe(retry !== null);
  return { acked: result.explicitAcks.length === 1, retried: retry as QueueRetryOptions | null };
}

/** Delivers held messages one at a time until none is left; returns how many were delivered. */
export async function drain(bindings: Cloudflare.Env, queue: HeldQueue, limit = 50): Promise<number> {
  let delivered = 0;
  while (queue.messages.length > 0) {
    if (++delivered > limit) throw new Error(`more than ${limit} messages`);
    const outcome = await deliver(bindings, queue.take());
    expect(outcome.acked, `message ${delivered}: ${JSON.stringify(outcome)}`).toBe(true);
  }
  return delivered;
}

const db = () => database(env.DB);

/** The export job as stored (drizzle's row: camelCase, JSON columns parsed). */
export async function jobRow(id: string) {
  return db().select().from(exportJobs).where(eq(exportJobs.id, id)).get();
}

/** Sets columns of an export job directly, for a state the API cannot reach on demand. */
export async function updateJob(id: string, set: Partial<typeof exportJobs.$inferInsert>) {
  await db().update(exportJobs).set(set).where(eq(exportJobs.id, id));
}

/** Export jobs `userId` requested. */
export async function jobsRequestedBy(userId: string): Promise<number> {
  return db().$count(exportJobs, eq(exportJobs.requestedBy, userId));
}

/** The `export.*` outbox events of one export, oldest first, as the outbox stores them. */
export async function outboxFor(exportId: string) {
  const rows = await db()
    .select({
      type: outboxEvents.type,
      institution_id: outboxEvents.institutionId,
      user_id: outboxEvents.userId,
      payload: outboxEvents.payload,
    })
    .from(outboxEvents)
    .where(like(outboxEvents.type, "export.%"))
    .orderBy(outboxEvents.createdAt, outboxEvents.id);
  return rows.filter((row) => (row.payload as { export_id?: string }).export_id === exportId);
}

/** `real` with some members replaced; every other method still runs on `real` itself. */
export function withOverrides<T extends object>(real: T, overrides: Partial<T>): T {
  return new Proxy(real, {
    get(target, name) {
      if (Object.hasOwn(overrides, name)) return overrides[name as keyof T];
      const value = Reflect.get(target, name, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** The test file's R2 bucket with some methods replaced (a failing delete, a put that waits). */
export function bucketWith(overrides: Partial<R2Bucket>): R2Bucket {
  return withOverrides(env.EXPORTS_BUCKET, overrides);
}

/** The test file's D1 database whose batches (the status changes with their outbox events) fail. */
export function d1WithFailingBatches(): D1Database {
  const failing: D1Database = withOverrides(env.DB, {
    batch: async () => {
      throw new Error("D1_ERROR: simulated outage");
    },
    // The service context runs every query in a session: this binding is its own.
    withSession: () => failing as unknown as D1DatabaseSession,
  });
  return failing;
}

/** A promise and the function that resolves it. */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}
