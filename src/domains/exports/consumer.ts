import type { Env } from "../../env";
import { database } from "../../platform/db";
import { publishEvents } from "../../platform/events";
import { newId } from "../../platform/ids";
import { queueDelaySeconds } from "../../platform/queue";
import { exportSettings } from "./config";
import { generate, LEASE_MARGIN_MS } from "./generate";
import { ACTIVE_STATUSES, claimJob, findJob, handOver, markFailed, releaseLease, revertHandOver, type ExportJob, type ExportMessage } from "./jobs";
import { ExportFailure, LeaseLost } from "./writer";


export const GAVE_UP =
  "The export could not be generated: it failed on every attempt. Request it again; if that fails too, contact support with the export id.";

function log(level: "info" | "warn" | "error", message: string, fields: Record<string, unknown>): void {
  console.error(JSON.stringify({ level, message, ...fields }));
}

function parseMessage(body: unknown): ExportMessage | null {
  if (typeof body !== "object" || body === null) return null;
  const { job_id, generation } = body as Record<string, unknown>;
  return typeof job_id === "string" && Number.isInteger(generation) ? { job_id, generation: generation as number } : null;
}

export async function enqueueGeneration(env: Env, message: ExportMessage): Promise<void> {
  await env.EXPORTS_QUEUE.send(message, { contentType: "json" });
}

function secondsUntil(at: number | null, now: number): number {
  return queueDelaySeconds(((at ?? now) - now) / 1000, 1);
}

/**
 * The exports queue (max_batch_size 1, so one job per invocation). A message names a job and the
 * generation it continues; it is acknowledged once the job is finished, failed, handed over to a
 * continuation message, or not its business any more (another generation, a terminal status).
 * Errors are retried with backoff; after the queue's retries the dead-letter consumer fails the job.
 */
export async function consumeExports(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  for (const message of batch.messages) await handleMessage(message, env);
}

async function handleMessage(message: Message<unknown>, env: Env): Promise<void> {
  const body = parseMessage(message.body);
  if (!body) {
    log("error", "malformed export message dropped", { id: message.id });
    message.ack();
    return;
  }
  const db = database(env.DB);
  const settings = exportSettings(env);
  const leaseId = newId("lse");
  const now = Date.now();
  const job = await claimJob(db, body, leaseId, now, now + settings.timeBudgetMs + LEASE_MARGIN_MS);
  if (!job) {
    const current = await findJob(db, body.job_id);
    if (current && ACTIVE_STATUSES.includes(current.status) && current.generation === body.generation) {
      // A twin of this message is being handled: come back when its lease would have run out.
      message.retry({ delaySeconds: secondsUntil(current.leaseUntil, now) });
    } else {
      message.ack();
    }
    return;
  }

  try {
    const outcome = await generate(env, { job, leaseId, settings, deadline: now + settings.timeBudgetMs });
    if (outcome === "continue") await continueLater(env, job, leaseId);
    message.ack();
  } catch (error) {
    if (error instanceof LeaseLost) {
      message.ack();
      return;
    }
    if (error instanceof ExportFailure) {
      await failJob(env, job, error.message, leaseId);
      message.ack();
      return;
    }
    log("warn", "export generation failed; retrying", { export_id: job.id, attempt: message.attempts, error: error instanceof Error ? error.stack : String(error) });
    await releaseLease(db, job.id, leaseId).catch(() => undefined);
    message.retry({ delaySeconds: Math.min(300, 5 * 2 ** (message.attempts - 1)) });
  }
}

/** Hands the job to a new message of the next generation; the current one is then done. */
async function continueLater(env: Env, job: ExportJob, leaseId: string): Promise<void> {
  const db = database(env.DB);
  if (!(await handOver(db, job, leaseId, Date.now()))) throw new LeaseLost();
  try {
    await enqueueGeneration(env, { job_id: job.id, generation: job.generation + 1 });
  } catch (error) {
    // No message of the new generation exists, so nobody can have claimed the job: step back, and
    // let this message's retry carry on from the checkpoint.
    await revertHandOver(db, job);
    throw error;
  }
}

/**
 * A job fails for good: the multipart upload is aborted (best effort: R2 also aborts abandoned
 * uploads after 7 days), then the status and the `export.failed` event are written in one batch.
 */
export async function failJob(env: Env, job: ExportJob, reason: string, leaseId: string | null): Promise<boolean> {
  if (job.uploadId) {
    try {
      await env.EXPORTS_BUCKET.resumeMultipartUpload(job.r2Key, job.uploadId).abort();
    } catch (error) {
      log("warn", "could not abort an export's multipart upload", { export_id: job.id, error: String(error) });
    }
  }
  const eventId = await markFailed(database(env.DB), job, reason, Date.now(), leaseId);
  if (!eventId) return false;
  log("info", "export failed", { export_id: job.id, reason });
  await publishEvents(env, [eventId]);
  return true;
}

/**
 * The exports dead-letter queue: a message the queue gave up on. If it still is the job's current
 * generation (no later message took over) and nobody holds the job, the job has failed.
 */
export async function consumeExportDeadLetters(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const db = database(env.DB);
  for (const message of batch.messages) {
    const body = parseMessage(message.body);
    const job = body ? await findJob(db, body.job_id) : null;
    if (!body || !job || !ACTIVE_STATUSES.includes(job.status) || job.generation !== body.generation) {
      message.ack();
      continue;
    }
    const now = Date.now();
    if (job.leaseUntil !== null && job.leaseUntil >= now) {
      message.retry({ delaySeconds: secondsUntil(job.leaseUntil, now) });
      continue;
    }
    await failJob(env, job, GAVE_UP, null);
    message.ack();
  }
}
