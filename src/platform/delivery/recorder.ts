import type { Statement } from "../batch";
import type { Database } from "../db";

/** One answered attempt: the item sent and what it came to. */
export interface Attempt<Item, Result> {
  item: Item;
  result: Result;
}

/** Claimed work the target will not send (its destination is gone or switched off): closed unsent. */
export interface Closed {
  id: string;
  statements: Statement[];
}

/** The longest an answered attempt waits for the write that records it (beside one in flight). */
const RECORD_WINDOW_MS = 20;

/**
 * Writes answered attempts as they come: an answer waits at most `RECORD_WINDOW_MS` (plus the write
 * before it, when one is in flight) for the write that records it, and each write takes every answer
 * that arrived meanwhile — so a batch of fast answers costs a few writes, not one each, and a crash
 * loses the records of at most the last window's answers. A failed write stops the recording (and,
 * through `failed`, the sends): what it held stays unsettled.
 *
 * One recorder per sender (`openSender`: a `sendAndRecord` call, or an offer's first attempts over
 * its commits), never shared between invocations: its timer, its write in flight and the messages its
 * writes settle all belong to the invocation that made it, and `done()` drains it before the sender's
 * `done()` returns (Workers forbid awaiting one invocation's I/O from another).
 */
export function recorder<Item, Result>(
  db: Database,
  now: () => number,
  statementsOf: (attempts: Attempt<Item, Result>[], now: number) => Statement[],
) {
  type Entry =
    | { closed: Closed; written: () => void }
    | { attempt: Attempt<Item, Result>; written: () => void };
  let pending: Entry[] = [];
  let running: Promise<void> | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let failure: { error: unknown } | null = null;
  const write = async (entries: Entry[]) => {
    const statements: Statement[] = [];
    const attempts: Attempt<Item, Result>[] = [];
    for (const entry of entries) {
      if ("closed" in entry) statements.push(...entry.closed.statements);
      else attempts.push(entry.attempt);
    }
    try {
      statements.push(...statementsOf(attempts, now()));
      const [first, ...rest] = statements;
      if (first) await db.batch([first, ...rest]);
    } catch (error) {
      failure = { error };
      return;
    }
    for (const entry of entries) entry.written();
  };
  const stopTimer = () => {
    if (timer) clearTimeout(timer);
    timer = null;
  };
  // `running` is cleared once the write has settled (a write that ends at once must not clear it
  // before it is set); what arrived meanwhile waits for the next window.
  const start = () => {
    stopTimer();
    const entries = pending;
    pending = [];
    running = write(entries).finally(() => {
      running = null;
      schedule();
    });
  };
  const schedule = () => {
    if (failure || running || timer || pending.length === 0) return;
    timer = setTimeout(() => {
      timer = null;
      if (!running && !failure && pending.length > 0) start();
    }, RECORD_WINDOW_MS);
  };
  return {
    add(entry: Entry) {
      if (failure) return;
      pending.push(entry);
      schedule();
    },
    get failed() {
      return failure !== null;
    },
    /** Writes what is left at once, and throws if any write failed. */
    async done() {
      while (running || (pending.length > 0 && !failure)) {
        if (!running) start();
        await running;
      }
      stopTimer();
      if (failure) throw failure.error;
    },
  };
}
