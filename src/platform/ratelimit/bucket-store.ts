import { SlidingWindow } from "./window";

const KEY_PREFIX = "rate:";

/**
 * Persists a SlidingWindow's buckets in a Durable Object's storage, so that an evicted or restarted
 * object resumes with the hits of the current window.
 *
 * Writes are `allowUnconfirmed`: the answer leaves without waiting for the write to be flushed. The
 * decision itself is made in memory by the one object that owns the counter, so this can never let
 * concurrent requests overshoot; the only thing a crash between answer and flush could lose is the
 * last few hits, i.e. the limiter errs towards the client, never towards refusing wrongly.
 */
export class PersistentWindow {
  private constructor(
    private readonly storage: DurableObjectStorage,
    private readonly window: SlidingWindow,
  ) {}

  /** Call inside `blockConcurrencyWhile` from the object's constructor. */
  static async load(storage: DurableObjectStorage): Promise<PersistentWindow> {
    const stored = await storage.list<number>({ prefix: KEY_PREFIX });
    const entries = [...stored].map(([key, hits]) => [Number(key.slice(KEY_PREFIX.length)), hits] as const);
    return new PersistentWindow(storage, new SlidingWindow(entries));
  }

  consume(nowMs: number, limit: number, windowSeconds: number) {
    const dropped = this.window.prune(nowMs, windowSeconds);
    if (dropped.length > 0) this.forget(dropped);
    const decision = this.window.consume(nowMs, limit, windowSeconds);
    if (decision.allowed) this.save(decision.second);
    return decision;
  }

  peek(nowMs: number, limit: number, windowSeconds: number) {
    const dropped = this.window.prune(nowMs, windowSeconds);
    if (dropped.length > 0) this.forget(dropped);
    return this.window.peek(nowMs, limit, windowSeconds);
  }

  refund(second: number): void {
    if (this.window.refund(second)) {
      if (this.window.count(second) > 0) this.save(second);
      else this.forget([second]);
    }
  }

  private save(second: number): void {
    void this.storage.put(KEY_PREFIX + second, this.window.count(second), { allowUnconfirmed: true });
  }

  private forget(seconds: number[]): void {
    void this.storage.delete(
      seconds.map((s) => KEY_PREFIX + s),
      { allowUnconfirmed: true },
    );
  }
}
