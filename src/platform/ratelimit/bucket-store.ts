import { SlidingWindow } from "./window";

/**
 * Persists a SlidingWindow's buckets in a Durable Object's SQLite storage, so that an evicted or
 * restarted object resumes with the hits of the current window. The statements are synchronous and
 * local to the object: microseconds, no network.
 */
export class PersistentWindow {
  private readonly window: SlidingWindow;

  constructor(private readonly sql: SqlStorage) {
    sql.exec("CREATE TABLE IF NOT EXISTS rate_buckets (second INTEGER PRIMARY KEY, hits INTEGER NOT NULL)");
    const rows = sql.exec<{ second: number; hits: number }>("SELECT second, hits FROM rate_buckets").toArray();
    this.window = new SlidingWindow(rows.map((r) => [r.second, r.hits] as const));
  }

  consume(nowMs: number, limit: number, windowSeconds: number) {
    const decision = this.window.consume(nowMs, limit, windowSeconds);
    if (decision.allowed) {
      this.sql.exec(
        "INSERT INTO rate_buckets (second, hits) VALUES (?, 1) ON CONFLICT(second) DO UPDATE SET hits = hits + 1",
        decision.second,
      );
    }
    this.sql.exec("DELETE FROM rate_buckets WHERE second <= ?", Math.floor(nowMs / 1000) - windowSeconds);
    return decision;
  }

  peek(nowMs: number, limit: number, windowSeconds: number) {
    return this.window.peek(nowMs, limit, windowSeconds);
  }

  refund(second: number): void {
    if (this.window.refund(second)) {
      this.sql.exec("UPDATE rate_buckets SET hits = hits - 1 WHERE second = ?", second);
      this.sql.exec("DELETE FROM rate_buckets WHERE second = ? AND hits <= 0", second);
    }
  }
}
