import { SlidingWindow } from "./window";

const KEY_PREFIX = "rate:";
/** Bucket changes are written at most this often, in one multi-key write. */
const FLUSH_DELAY_MS = 200;

/**
 * Persists a SlidingWindow's buckets in a Durable Object's storage, so that an evicted or restarted
 * object resumes with the hits of the current window.
 *
 * The decision is made in memory by the one object that owns the counter, so concurrent requests can
 * never overshoot whatever the storage does. Storage only has to survive a restart, so changed
 * buckets are written together every FLUSH_DELAY_MS (and `allowUnconfirmed`, off the answer's path)
 * instead of once per request: a crash can forget at most the last fraction of a second of hits,
 * which errs towards the client, never towards refusing wrongly.
 */
export class PersistentWindow {
  private readonly dirty = new Set<number>();
  private flushTimer: ReturnType<typeof setTimeout> | null = null;

  private constructor(
    private readonly storage: DurableObjectStorage,
    private readonly window: SlidingWindow,
    private readonly prefix: string,
  ) {}

  /**
   * Call inside `blockConcurrencyWhile` from the object's constructor. An object that keeps several
   * windows gives each its own key `prefix` (the institution's per-user windows).
   */
  static async load(storage: DurableObjectStorage, prefix = KEY_PREFIX): Promise<PersistentWindow> {
    const stored = await storage.list<number>({ prefix });
    const entries = [...stored].map(([key, hits]) => [Number(key.slice(prefix.length)), hits] as const);
    return new PersistentWindow(storage, new SlidingWindow(entries), prefix);
  }

  /** Decides without counting (see SlidingWindow.peek). */
  peek(nowMs: number, limit: number, windowSeconds: number) {
    this.prune(nowMs, windowSeconds);
    return this.window.peek(nowMs, limit, windowSeconds);
  }

  /** Nothing counted and nothing waiting to be written: the object may forget this window. */
  get idle(): boolean {
    return this.window.total === 0 && this.flushTimer === null;
  }

  consume(nowMs: number, limit: number, windowSeconds: number) {
    this.prune(nowMs, windowSeconds);
    const decision = this.window.consume(nowMs, limit, windowSeconds);
    if (decision.allowed) this.markDirty(decision.second);
    return decision;
  }

  /** Counts up to `wanted` hits at once (see SlidingWindow.take). */
  take(nowMs: number, limit: number, windowSeconds: number, wanted: number) {
    this.prune(nowMs, windowSeconds);
    const decision = this.window.take(nowMs, limit, windowSeconds, wanted);
    if (decision.granted > 0) this.markDirty(decision.second);
    return decision;
  }

  refund(second: number, count = 1): void {
    if (this.window.refund(second, count) > 0) this.markDirty(second);
  }

  clear(): void {
    for (const second of this.window.clear()) this.markDirty(second);
  }

  private prune(nowMs: number, windowSeconds: number): void {
    for (const second of this.window.prune(nowMs, windowSeconds)) this.markDirty(second);
  }

  private markDirty(second: number): void {
    this.dirty.add(second);
    this.flushTimer ??= setTimeout(() => this.flush(), FLUSH_DELAY_MS);
  }

  private flush(): void {
    this.flushTimer = null;
    const puts: Record<string, number> = {};
    const deletes: string[] = [];
    for (const second of this.dirty) {
      const hits = this.window.count(second);
      if (hits > 0) puts[this.prefix + second] = hits;
      else deletes.push(this.prefix + second);
    }
    this.dirty.clear();
    if (Object.keys(puts).length > 0) void this.storage.put(puts, { allowUnconfirmed: true });
    if (deletes.length > 0) void this.storage.delete(deletes, { allowUnconfirmed: true });
  }
}
