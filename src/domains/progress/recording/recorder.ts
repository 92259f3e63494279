import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../../env";
import { invocationContext, type ServiceContext, sessionBookmark } from "../../../platform/service/context";
import type { DatabaseBinding } from "../../../platform/service/databases";
import type { Learner } from "../learner";
import { recordAttempts } from "./service";
import type { AttemptInput, RecordResult } from "./types";

const ATTEMPTS = 3;

/** What a request hands the recorder: whose attempts, and the request id its work is logged under. */
export interface RecordRequest {
  learner: Learner;
  attempts: AttemptInput[];
  requestId: string;
  /** The learner's institution's database (the request's `ctx.database`). */
  database: DatabaseBinding;
}

/**
 * One object per learner: it runs that learner's attempt batches one at a time, so each batch reads
 * the state the previous one wrote. D1 stays the store; this object holds no data of its own.
 *
 * Each call is its own invocation, so it builds its own service context (the request's context cannot
 * cross the RPC boundary): this object's `env`, the calling request's id, the injectable clock, and
 * this object's `waitUntil`, on which `commit` publishes the recorded events after the batch.
 */
export class ProgressRecorder extends DurableObject<Env> {
  private tail: Promise<unknown> = Promise.resolve();

  /**
   * Records in a D1 session of its own at the primary (the learner's state must be the latest), and
   * answers that session's bookmark with the result, for the request to carry on from (read-your-writes).
   */
  async record(request: RecordRequest): Promise<RecordResult & { bookmark: string | null }> {
    const ctx = invocationContext({
      env: this.env,
      requestId: request.requestId,
      waitUntil: (promise) => this.ctx.waitUntil(promise),
      database: request.database,
    });
    const run = this.tail.then(() => this.recordWithRetry(ctx, request));
    this.tail = run.catch(() => undefined);
    const result = await run;
    return { ...result, bookmark: sessionBookmark(ctx) };
  }

  private async recordWithRetry(ctx: ServiceContext, { learner, attempts }: RecordRequest) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await recordAttempts(ctx, { learner, attempts });
      } catch (error) {
        // The batch is atomic: a failed one wrote nothing, so it is safe to read again and retry
        // (a concurrent twin that took an attempt id shows up as a duplicate the second time).
        if (attempt >= ATTEMPTS) throw error;
      }
    }
  }
}
