import type { ServiceContext } from "../service/context";
import { openPool, PARALLEL_SENDS } from "./pool";
import { type Attempt, type Closed, recorder } from "./recorder";
import { releaseSql } from "./sql";
import { type DeliveryTarget, enqueue, retryDelay, type Verdict, type WorkState } from "./target";

/** Sending claimed work and recording each attempt: for the queue's consumer and for a fan-out's first attempts. */

export interface SendOptions<Item, Result> {
  /** Claimed work closed unsent, written with the first attempts (or alone). */
  closed?: Closed[];
  onClosed?: (id: string) => void;
  /** After this time no further send starts: the items left are returned as `released`. */
  deadline?: number;
  /** An attempt's record is written. */
  onRecorded: (item: Item, result: Result) => void;
  /** A send threw; without this handler the first such error is thrown once the rest are recorded. */
  onError?: (item: Item, error: unknown) => void;
}

/**
 * Sends claimed items through the target, at most six at a time, recording each attempt as soon as it
 * is answered (never at the end of the batch: a crash re-sends at most what was in flight or answered
 * in the last `RECORD_WINDOW_MS`). When a record cannot be written, no further send starts, and the
 * error is thrown once the sends in flight are answered.
 */
export async function sendAndRecord<Item extends { id: string }, Result extends Verdict>(
  ctx: ServiceContext,
  target: Pick<DeliveryTarget<unknown, WorkState, Item, Result>, "name" | "send" | "record">,
  items: Item[],
  options: SendOptions<Item, Result>,
): Promise<{ attempts: Attempt<Item, Result>[]; released: Item[] }> {
  const sender = openSender(ctx, target, options);
  sender.add(items);
  return sender.done();
}

/**
 * `sendAndRecord` for items that arrive over time (an offer's commits): `add` hands more over, sent
 * in order behind the ones before, still at most six at a time for the whole sender and recorded by
 * one recorder (one write per window, whichever commit an answer came from). `done` waits for every
 * send and record, then answers as `sendAndRecord` does; nothing may be added after it.
 */
export function openSender<Item extends { id: string }, Result extends Verdict>(
  ctx: ServiceContext,
  target: Pick<DeliveryTarget<unknown, WorkState, Item, Result>, "name" | "send" | "record">,
  options: SendOptions<Item, Result>,
) {
  const log = recorder<Item, Result>(
    ctx.db,
    () => ctx.now(),
    (attempts, now) => (attempts.length > 0 ? target.record(ctx, attempts, now) : []),
  );
  for (const closed of options.closed ?? [])
    log.add({ closed, written: () => options.onClosed?.(closed.id) });
  const attempts: Attempt<Item, Result>[] = [];
  const released: Item[] = [];
  let thrown: { error: unknown } | null = null;
  const pool = openPool<Item>(PARALLEL_SENDS, async (item) => {
    if (log.failed || (options.deadline !== undefined && ctx.now() >= options.deadline)) {
      released.push(item);
      return;
    }
    let result: Result;
    try {
      result = await target.send(ctx, item);
    } catch (error) {
      console.error(
        JSON.stringify({
          level: "error",
          message: "delivery attempt threw",
          target: target.name,
          id: item.id,
          error: String(error),
        }),
      );
      if (options.onError) options.onError(item, error);
      else thrown ??= { error };
      return;
    }
    const attempt = { item, result };
    attempts.push(attempt);
    log.add({ attempt, written: () => options.onRecorded(item, result) });
  });
  return {
    add: (items: readonly Item[]) => pool.add(items),
    async done(): Promise<{ attempts: Attempt<Item, Result>[]; released: Item[] }> {
      await pool.done();
      await log.done();
      if (thrown) throw (thrown as { error: unknown }).error;
      return { attempts, released };
    },
  };
}

/**
 * A fan-out's first attempts, made where the work is created (the webhooks' fan-out, the xAPI
 * subscriber's offer): the rows were inserted already claimed (attempt 1, until `lease`) in the commit
 * that made them, so no consumer takes them meanwhile. They are sent and recorded as
 * `sendAndRecord` does until `deadline`; the ones the deadline (or a failed record) stopped before
 * their send are un-claimed; then one message each goes to the target's queue for what is still
 * open: those un-claimed and `queue` (work the caller did not claim) at once, the retries with their
 * delay. A send that throws is thrown once the rest are recorded, before anything is queued: the
 * invocation fails as if it had crashed, and its claims lapse into the minute sweep's `requeueLost`.
 */
export async function sendFirstAttempts<Item extends { id: string }, Result extends Verdict>(
  ctx: ServiceContext,
  target: Pick<
    DeliveryTarget<unknown, WorkState, Item, Result>,
    "name" | "table" | "queue" | "message" | "send" | "record"
  >,
  items: Item[],
  options: { deadline: number; lease: number; queue?: readonly string[] },
): Promise<{ attempts: Attempt<Item, Result>[]; released: Item[] }> {
  const first = openFirstAttempts(ctx, target, options);
  first.add(items, options.queue);
  return first.done();
}

/**
 * `sendFirstAttempts` for work created over time (an offer's commits): each `add` hands over the
 * items one commit claimed, sent as soon as a lane is free (six at a time for all of them), and the
 * ids of work it did not claim, queued at the end. `done` waits for the sends and records, un-claims
 * what the deadline did not reach and queues what is still open, as `sendFirstAttempts` does.
 */
export function openFirstAttempts<Item extends { id: string }, Result extends Verdict>(
  ctx: ServiceContext,
  target: Pick<
    DeliveryTarget<unknown, WorkState, Item, Result>,
    "name" | "table" | "queue" | "message" | "send" | "record"
  >,
  options: { deadline: number; lease: number },
) {
  const sender = openSender(ctx, target, { deadline: options.deadline, onRecorded: () => {} });
  const queue: string[] = [];
  return {
    add(items: readonly Item[], untried: readonly string[] = []) {
      queue.push(...untried);
      sender.add(items);
    },
    async done(): Promise<{ attempts: Attempt<Item, Result>[]; released: Item[] }> {
      const sent = await sender.done();
      const released = sent.released.map((item) => item.id);
      if (released.length > 0)
        await ctx.d1.prepare(releaseSql(target.table)).bind(JSON.stringify(released), options.lease).run();
      const retries = sent.attempts.filter((a) => a.result.status === "retrying");
      const now = [...new Set([...queue, ...released])];
      await enqueue(
        ctx,
        target,
        [...now, ...retries.map((r) => r.item.id)],
        [...now.map(() => 0), ...retries.map((r) => retryDelay(r.result.retryInSeconds ?? 0))],
      );
      return sent;
    },
  };
}
