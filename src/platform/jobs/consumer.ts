import type { ZodType } from "zod";
import { newId } from "../ids";
import { parseMessage, queueDelaySeconds } from "../queue";
import type { ServiceContext } from "../service/context";
import { handOver, isHeld, type LeasedJobs, revertHandOver } from "./lease";

/**
 * The one consumer of a queue of leased jobs (exports, bulk uploads, xAPI back-fills, LTI roster
 * syncs): what a message does with the job it names is the same for all of them, and written here
 * once; a domain says only how to claim, run, fail and release its own jobs. See
 * docs/design/job-leases.md.
 *
 * A message names a job and the generation it continues. Its invocation claims the job under a lease
 * (the claim is conditional: active, at that generation, nobody holding it), runs it for its time
 * budget, and then acknowledges — the job finished, or was handed to a message of the next
 * generation. A message that cannot claim its job comes back when a live holder's lease would run
 * out (a twin of it is being handled), or is acknowledged (a past generation, a finished job). An
 * error the domain calls permanent fails the job at once; any other gives the job back to the
 * message's retry, with backoff. The dead-letter consumer fails a job the queue gave up on, if no
 * later message took it over and nobody holds it.
 */

/** What every leased job row has. */
export interface LeasedJobRow {
  id: string;
  generation: number;
  leaseId: string | null;
  leaseUntil: number | null;
}

/** What a run ends with: the job is done (finished, failed or lost), or its rest goes to the next message. */
export type JobRunOutcome<Job> = { state: "done" } | { state: "continue"; job: Job };

export interface LeasedJobQueue<Body extends { generation: number }, Job extends LeasedJobRow> {
  /** The queue's name (its dead-letter queue is `<queue>-dlq`), for logs and dead letters. */
  queue: string;
  /** The job's name and its id's field in log lines: `"export"`, `"export_id"`. */
  noun: string;
  idField: string;
  schema: ZodType<Body>;
  /** The id of the job a message names. */
  jobId(message: Body): string;
  /** The dead-letter queue a message that cannot be read is moved to. */
  deadLetterQueue(ctx: ServiceContext): Queue;
  lease: LeasedJobs;
  claim(ctx: ServiceContext, message: Body, leaseId: string): Promise<Job | null>;
  find(ctx: ServiceContext, jobId: string): Promise<Job | null>;
  isActive(job: Job): boolean;
  /** Works on the held job for the invocation's time budget. */
  run(ctx: ServiceContext, job: Job, leaseId: string): Promise<JobRunOutcome<Job>>;
  /** Sends the message that continues the job at `generation`. */
  enqueue(ctx: ServiceContext, jobId: string, generation: number): Promise<void>;
  /** The holder lost its lease (the run throws it): the message is done, whoever holds the job goes on. */
  isLeaseLost?(error: unknown): boolean;
  /** Why the job fails now, for an error that retrying will not cure; null: retry. */
  permanentFailure?(error: unknown): string | null;
  /** Fails the held job for good. Throws when it could not: the message is retried. */
  fail?(ctx: ServiceContext, job: Job, leaseId: string, reason: string): Promise<void>;
  /** Gives the held job back to the message's retry, due in `retryInMs`. */
  release(ctx: ServiceContext, job: Job, leaseId: string, retryInMs: number): Promise<void>;
  /** The queue gave up on the job's current message and nobody holds the job: it fails. Throws to retry. */
  giveUp(ctx: ServiceContext, job: Job): Promise<void>;
}

/** Delay of the n-th retry of a failed run: 5 s, doubling, at most 5 minutes. */
export function retryDelaySeconds(attempts: number): number {
  return Math.min(300, 5 * 2 ** (Math.max(1, attempts) - 1));
}

function log(level: "info" | "warn" | "error", message: string, fields: Record<string, unknown>): void {
  console.error(JSON.stringify({ level, message, ...fields }));
}

function secondsUntil(at: number | null, now: number): number {
  return queueDelaySeconds(((at ?? now) - now) / 1000, 1);
}

/** The queue's consumer and its dead-letter queue's, for src/queue-consumers.ts. */
export function leasedJobConsumer<Body extends { generation: number }, Job extends LeasedJobRow>(
  jobs: LeasedJobQueue<Body, Job>,
) {
  async function handle(ctx: ServiceContext, message: Message<unknown>): Promise<void> {
    const body = await parseMessage(jobs.schema, message, {
      queue: jobs.queue,
      deadLetter: jobs.deadLetterQueue(ctx),
    });
    if (!body) return; // logged, dead-lettered and acknowledged
    const leaseId = newId("lse");
    const job = await jobs.claim(ctx, body, leaseId);
    if (!job) {
      const current = await jobs.find(ctx, jobs.jobId(body));
      const now = ctx.now();
      if (
        current &&
        jobs.isActive(current) &&
        current.generation === body.generation &&
        isHeld(current, now)
      ) {
        // A twin of this message is being handled: come back when its lease would have run out.
        message.retry({ delaySeconds: secondsUntil(current.leaseUntil, now) });
      } else {
        message.ack();
      }
      return;
    }
    try {
      const outcome = await jobs.run(ctx, job, leaseId);
      if (outcome.state === "continue") await continueLater(ctx, outcome.job, leaseId);
      message.ack();
    } catch (error) {
      if (jobs.isLeaseLost?.(error)) {
        message.ack();
        return;
      }
      let cause: unknown = error;
      const reason = jobs.permanentFailure?.(error) ?? null;
      if (reason !== null && jobs.fail) {
        try {
          await jobs.fail(ctx, job, leaseId, reason);
          message.ack();
          return;
        } catch (cleanup) {
          // The job could not be failed (its file could not be deleted…), so it is still active:
          // the retry meets the same failure and tries again.
          cause = cleanup;
        }
      }
      log("warn", `${jobs.noun} failed; retrying`, {
        [jobs.idField]: job.id,
        attempt: message.attempts,
        error: cause instanceof Error ? cause.stack : String(cause),
      });
      const delaySeconds = retryDelaySeconds(message.attempts);
      await jobs.release(ctx, job, leaseId, delaySeconds * 1000).catch(() => undefined);
      message.retry({ delaySeconds });
    }
  }

  /** Hands the job to a message of the next generation; the current one is then done. */
  async function continueLater(ctx: ServiceContext, job: Job, leaseId: string): Promise<void> {
    if (!(await handOver(ctx, jobs.lease, { job, leaseId }))) return; // taken over: the new holder goes on
    try {
      await jobs.enqueue(ctx, job.id, job.generation + 1);
    } catch (error) {
      // No message of the new generation exists, so nobody can have claimed the job: step back, and
      // let this message's retry carry on from the checkpoint.
      await revertHandOver(ctx, jobs.lease, job);
      throw error;
    }
  }

  async function consume(batch: MessageBatch<unknown>, ctx: ServiceContext): Promise<void> {
    for (const message of batch.messages) await handle(ctx, message);
  }

  async function consumeDeadLetters(batch: MessageBatch<unknown>, ctx: ServiceContext): Promise<void> {
    for (const message of batch.messages) {
      const body = await parseMessage(jobs.schema, message, { queue: `${jobs.queue}-dlq` });
      if (!body) continue; // logged and acknowledged: nothing names a job to fail
      const job = await jobs.find(ctx, jobs.jobId(body));
      if (!job || !jobs.isActive(job) || job.generation !== body.generation) {
        message.ack();
        continue;
      }
      const now = ctx.now();
      if (isHeld(job, now)) {
        message.retry({ delaySeconds: secondsUntil(job.leaseUntil, now) });
        continue;
      }
      try {
        await jobs.giveUp(ctx, job);
        message.ack();
      } catch (error) {
        log("warn", `could not fail a dead-lettered ${jobs.noun}; retrying`, {
          [jobs.idField]: job.id,
          error: String(error),
        });
        message.retry({ delaySeconds: 30 });
      }
    }
  }

  return { consume, consumeDeadLetters };
}
