import type { Env } from "../../env";
import { config } from "../../platform/config";
import { database } from "../../platform/db";
import { publishEvents } from "../../platform/events";
import { newId } from "../../platform/ids";
import { parseMessage, queueDelaySeconds } from "../../platform/queue";
import { generate, LEASE_MARGIN_MS } from "./generate";
import {
  ACTIVE_STATUSES,
  claimJob,
  type ExportJob,
  type ExportMessage,
  ExportMessageSchema,
  findJob,
  handOver,
  leaseToFail,
  markFailed,
  releaseLease,
  renewLease,
  revertHandOver,
} from "./jobs";
import { ExportFailure, LeaseLost } from "./writer";

export const GAVE_UP =
  "The export could not be generated: it failed on every attempt. Request it again; if that fails too, contact support with the export id.";

function log(level: "info" | "warn" | "error", message: string, fields: Record<string, unknown>): void {
  console.error(JSON.stringify({ level, message, ...fields }));
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
  const body = await parseMessage(ExportMessageSchema, message, {
    queue: "lingua-exports",
    deadLetter: env.EXPORTS_DLQ,
  });
  if (!body) return; // logged, dead-lettered and acknowledged
  const db = database(env.DB);
  const settings = config(env).exports;
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
    let cause: unknown = error;
    if (error instanceof ExportFailure) {
      try {
        await failJob(env, job, error.message, leaseId);
        message.ack();
        return;
      } catch (cleanup) {
        // The file could not be deleted, so the job is still active: the retry meets the same
        // failure and tries again.
        cause = cleanup;
      }
    }
    log("warn", "export generation failed; retrying", {
      export_id: job.id,
      attempt: message.attempts,
      error: cause instanceof Error ? cause.stack : String(cause),
    });
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

/** How long the dead-letter consumer and the give-up sweep hold a job while they fail it: two R2 calls and a D1 batch. */
const FAIL_LEASE_MS = LEASE_MARGIN_MS;

/**
 * A job fails for good, and its file with it. Whatever was written to R2 goes: the multipart
 * upload is aborted and the key deleted, because the whole file may already be there (a plain PUT,
 * or a completed upload whose `completed` status never got written). Then the status and the
 * `export.failed` event are written in one batch. The caller holds the job's lease, so no
 * invocation can complete it while its file is deleted.
 *
 * The file goes before the status: if R2 fails, the job is still active and whoever retries (the
 * message's retry, the dead-letter retry, the next sweep) fails it again; once `failed`, nothing
 * would come back for it. It is deleted once more after the status change, for an invocation that
 * outlived its lease and wrote in between; one that writes later finds the job failed and deletes
 * its own file (generate.ts). Returns false when the lease was lost before the status changed.
 */
export async function failJob(env: Env, job: ExportJob, reason: string, leaseId: string): Promise<boolean> {
  const db = database(env.DB);
  if (!(await renewLease(db, job, leaseId, Date.now() + FAIL_LEASE_MS))) return false;
  // Read again under the lease: this invocation may have created the upload since it claimed the job.
  const current = (await findJob(db, job.id)) ?? job;
  await discardFile(env, current);
  const eventId = await markFailed(db, current, reason, Date.now(), leaseId);
  if (!eventId) return false;
  await discardFile(env, current).catch((error) =>
    log("warn", "could not delete a failed export's file again", { export_id: job.id, error: String(error) }),
  );
  log("info", "export failed", { export_id: job.id, reason });
  await publishEvents(env, [eventId]);
  return true;
}

/**
 * Fails a job that no invocation holds (the dead-letter consumer, the give-up sweep): it is leased
 * first, at the generation the caller saw. False when somebody else holds or moved it meanwhile.
 * Throws, with the lease given back, when its file could not be deleted; the job stays active.
 */
export async function failUnheldJob(env: Env, job: ExportJob, reason: string): Promise<boolean> {
  const db = database(env.DB);
  const leaseId = newId("lse");
  const now = Date.now();
  if (!(await leaseToFail(db, job, leaseId, now, now + FAIL_LEASE_MS))) return false;
  try {
    return await failJob(env, job, reason, leaseId);
  } catch (error) {
    await releaseLease(db, job.id, leaseId).catch(() => undefined);
    throw error;
  }
}

async function discardFile(env: Env, job: ExportJob): Promise<void> {
  if (job.uploadId) {
    try {
      await env.EXPORTS_BUCKET.resumeMultipartUpload(job.r2Key, job.uploadId).abort();
    } catch (error) {
      // Already completed or aborted; an upload left open is aborted by R2 after 7 days anyway.
      log("warn", "could not abort an export's multipart upload", {
        export_id: job.id,
        error: String(error),
      });
    }
  }
  await env.EXPORTS_BUCKET.delete(job.r2Key);
}

/**
 * The exports dead-letter queue: a message the queue gave up on. If it still is the job's current
 * generation (no later message took over) and nobody holds the job, the job has failed.
 */
export async function consumeExportDeadLetters(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const db = database(env.DB);
  for (const message of batch.messages) {
    const body = await parseMessage(ExportMessageSchema, message, { queue: "lingua-exports-dlq" });
    if (!body) continue; // logged and acknowledged: nothing names a job to fail
    const job = await findJob(db, body.job_id);
    if (!job || !ACTIVE_STATUSES.includes(job.status) || job.generation !== body.generation) {
      message.ack();
      continue;
    }
    const now = Date.now();
    if (job.leaseUntil !== null && job.leaseUntil >= now) {
      message.retry({ delaySeconds: secondsUntil(job.leaseUntil, now) });
      continue;
    }
    try {
      await failUnheldJob(env, job, GAVE_UP);
      message.ack();
    } catch (error) {
      log("warn", "could not fail a dead-lettered export; retrying", {
        export_id: job.id,
        error: String(error),
      });
      message.retry({ delaySeconds: 30 });
    }
  }
}
