import { and, eq } from "drizzle-orm";
import { z } from "zod";
import { bulkJobs } from "../../../db/schema";
import { parseMessage } from "../../../platform/queue";
import type { ServiceContext } from "../../../platform/service/context";
import { type BulkJob, type BulkMessage, enqueueBulk, findJob, markFailed, readStoredFile } from "./jobs";
import { runJob } from "./runner";

const MessageSchema = z.object({ job_id: z.string().min(1), next_row: z.number().int().nonnegative() });

/** How long after its last sign of life a job is taken over by a message that is behind it. */
const TAKE_OVER_MARGIN_MS = 30_000;

function log(level: "info" | "warn" | "error", message: string, fields: Record<string, unknown>): void {
  console.error(JSON.stringify({ level, message, ...fields }));
}

const GAVE_UP = "The upload could not be processed: it failed on every attempt. Upload the file again.";

/**
 * The bulk queue (max_batch_size 1). A message names a job and the checkpoint it continues from.
 * Each chunk is applied under a guard on the checkpoint, so a message delivered twice, or two
 * invocations at once, apply every row once. A message behind the job's checkpoint is a duplicate
 * while the job shows signs of life; once it has shown none for a while, whoever held it died
 * between a chunk and its hand-over, and the message carries on from the checkpoint.
 */
export async function consumeBulk(batch: MessageBatch<unknown>, ctx: ServiceContext): Promise<void> {
  for (const message of batch.messages) await handleMessage(ctx, message);
}

async function handleMessage(ctx: ServiceContext, message: Message<unknown>): Promise<void> {
  const body: BulkMessage | null = await parseMessage(MessageSchema, message, {
    queue: "lingua-bulk-members",
    deadLetter: ctx.env.BULK_DLQ,
  });
  if (!body) return;
  const job = await findJob(ctx, body.job_id);
  if (!job || job.status === "completed" || job.status === "failed") {
    message.ack();
    return;
  }
  const settings = ctx.config.bulk;
  if (job.nextRow !== body.next_row) {
    const quietFor = ctx.now() - job.heartbeatAt;
    const patience = settings.timeBudgetMs + TAKE_OVER_MARGIN_MS;
    if (quietFor < patience) {
      message.retry({ delaySeconds: Math.max(1, Math.ceil((patience - quietFor) / 1000)) });
      return;
    }
  }
  try {
    await process(ctx, { job, settings });
    message.ack();
  } catch (error) {
    log("warn", "bulk upload chunk failed; retrying", {
      job_id: job.id,
      attempt: message.attempts,
      error: error instanceof Error ? error.stack : String(error),
    });
    message.retry({ delaySeconds: Math.min(300, 5 * 2 ** (message.attempts - 1)) });
  }
}

async function process(
  ctx: ServiceContext,
  input: { job: BulkJob; settings: { chunkRows: number; timeBudgetMs: number } },
) {
  const { job, settings } = input;
  const started = ctx.now();
  const object = job.r2Key ? await ctx.env.EXPORTS_BUCKET.get(job.r2Key) : null;
  if (!object) {
    await markFailed(ctx, { jobId: job.id, reason: "The uploaded file is gone; upload it again." });
    return;
  }
  const parsedFile = readStoredFile(job.r2Key ?? "", new Uint8Array(await object.arrayBuffer()));
  if (job.status === "queued") {
    await ctx.db
      .update(bulkJobs)
      .set({ status: "processing", heartbeatAt: ctx.now() })
      .where(and(eq(bulkJobs.id, job.id), eq(bulkJobs.status, "queued")))
      .run();
  }
  const current = (await findJob(ctx, job.id)) ?? job;
  const outcome = await runJob(ctx, {
    job: current,
    parsed: parsedFile,
    options: {
      chunkRows: settings.chunkRows,
      deadline: started + settings.timeBudgetMs,
      invitations: "defer",
      collect: false,
    },
  });
  if (outcome.state === "continue") {
    await enqueueBulk(ctx, { job_id: job.id, next_row: outcome.job.nextRow });
  }
}

/**
 * The bulk dead-letter queue: the queue gave up on a message. If the job is still at that
 * message's checkpoint, nothing else is carrying it: it has failed.
 */
export async function consumeBulkDeadLetters(
  batch: MessageBatch<unknown>,
  ctx: ServiceContext,
): Promise<void> {
  for (const message of batch.messages) {
    const body = await parseMessage(MessageSchema, message, { queue: "lingua-bulk-members-dlq" });
    if (!body) continue;
    const job = await findJob(ctx, body.job_id);
    if (job && job.nextRow === body.next_row && (job.status === "queued" || job.status === "processing")) {
      await markFailed(ctx, { jobId: job.id, reason: GAVE_UP });
      if (job.r2Key) await ctx.env.EXPORTS_BUCKET.delete(job.r2Key).catch(() => undefined);
    }
    message.ack();
  }
}
