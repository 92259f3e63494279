import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../../env";
import { database } from "../../../platform/db";
import type { Learner } from "../learner";
import { recordAttempts } from "./service";
import type { AttemptInput, RecordResult } from "./types";

const ATTEMPTS = 3;

/**
 * One object per learner: it runs that learner's attempt batches one at a time, so each batch reads
 * the state the previous one wrote. D1 stays the store; this object holds no data of its own.
 */
export class ProgressRecorder extends DurableObject<Env> {
  private tail: Promise<unknown> = Promise.resolve();

  async record(learner: Learner, attempts: AttemptInput[]): Promise<RecordResult> {
    const run = this.tail.then(() => this.recordWithRetry(learner, attempts));
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async recordWithRetry(learner: Learner, attempts: AttemptInput[]): Promise<RecordResult> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await recordAttempts(database(this.env.DB), learner, attempts);
      } catch (error) {
        // The batch is atomic: a failed one wrote nothing, so it is safe to read again and retry
        // (a concurrent twin that took an attempt id shows up as a duplicate the second time).
        if (attempt >= ATTEMPTS) throw error;
      }
    }
  }
}
