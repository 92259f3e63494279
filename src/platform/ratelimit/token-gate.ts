import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";
import { loadTokenRecord, type TokenRecord } from "../auth/principal-store";
import { config } from "../config";
import { database } from "../db";
import { type AdmitAnswer, type AdmitAnswerFormat, encodeAdmittedCurrent } from "./admit-answer";
import { PersistentWindow } from "./bucket-store";

/** How long a cached principal is trusted before it is re-read from D1 in the background. */
const PRINCIPAL_REFRESH_MS = 60_000;
/** last_used_at is written at most this often. */
const TOUCH_INTERVAL_MS = 60_000;

interface CachedRecord {
  record: TokenRecord;
  loadedAt: number;
  /** The token's expiry as epoch milliseconds, parsed once; null when it never expires. */
  expiresAtMs: number | null;
}

function cachedRecord(record: TokenRecord, loadedAt: number): CachedRecord {
  const expiresAt = record.state === "active" ? record.principal.token.expiresAt : null;
  return { record, loadedAt, expiresAtMs: expiresAt ? Date.parse(expiresAt) : null };
}

/**
 * One object per API token (addressed by the token's hash): it caches who the token belongs to and
 * counts its requests, so the hot path is one round trip to this object and no D1 query. Revocation
 * is pushed here before D1 is written, and a revoked object never comes back to life.
 */
export class TokenGate extends DurableObject<Env> {
  private rate!: PersistentWindow;
  private cached: CachedRecord | null;
  private loading: Promise<CachedRecord> | null = null;
  private lastTouchAt = 0;
  private readonly windowSeconds: number;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.windowSeconds = config(env).rateLimitWindowSeconds;
    void ctx.blockConcurrencyWhile(async () => {
      this.rate = await PersistentWindow.load(ctx.storage);
    });
    // The table is created by the first store, so that the object of a guessed token stores nothing at all.
    const stored = this.hasRecordTable()
      ? ctx.storage.sql
          .exec<{ body: string; loaded_at: number }>("SELECT body, loaded_at FROM token_record")
          .toArray()[0]
      : undefined;
    this.cached = stored ? cachedRecord(JSON.parse(stored.body) as TokenRecord, stored.loaded_at) : null;
  }

  async admit(
    tokenHash: string,
    knownVersion?: number,
    format: AdmitAnswerFormat = "object",
  ): Promise<AdmitAnswer> {
    const cached = this.cached ?? (await this.load(tokenHash));
    const now = Date.now();
    const record = cached.record;
    if (record.state !== "active") return { outcome: "unauthenticated", reason: record.state };
    if (now - cached.loadedAt > PRINCIPAL_REFRESH_MS && !this.loading) {
      // Serve the cached principal now; pick up role or plan changes for the next request.
      this.ctx.waitUntil(this.load(tokenHash).catch(() => undefined));
    }
    const { principal } = record;
    if (cached.expiresAtMs !== null && cached.expiresAtMs <= now) {
      return { outcome: "unauthenticated", reason: "expired" };
    }
    const rate = this.rate.consume(now, principal.rateLimitPerMinute, this.windowSeconds);
    if (!rate.allowed) return { outcome: "rate_limited", rate };
    const touch = now - this.lastTouchAt >= TOUCH_INTERVAL_MS;
    if (touch) this.lastTouchAt = now;
    const version = cached.loadedAt;
    if (knownVersion !== version) return { outcome: "admitted", version, principal, rate, touch };
    return format === "compact"
      ? encodeAdmittedCurrent(rate, touch)
      : { outcome: "admitted", version, rate, touch };
  }

  /** Called before the D1 row is marked revoked, so the very next request is refused. */
  async revoke(): Promise<void> {
    this.store(cachedRecord({ state: "revoked" }, Date.now()));
  }

  /** Forget the cached principal (role, plan or institution changed); the next request re-reads D1. */
  async invalidate(): Promise<void> {
    if (this.cached?.record.state === "revoked") return;
    if (this.hasRecordTable()) this.ctx.storage.sql.exec("DELETE FROM token_record");
    this.cached = null;
  }

  private load(tokenHash: string): Promise<CachedRecord> {
    // Concurrent first requests share one D1 read.
    this.loading ??= loadTokenRecord(database(this.env.DB), tokenHash)
      .then((record) => {
        // A revocation that landed while D1 was being read wins over what D1 said.
        if (this.cached?.record.state === "revoked") return this.cached;
        const entry = cachedRecord(record, Date.now());
        // A token D1 does not know was most likely guessed: remembered while this object lives,
        // never stored, so guesses leave nothing behind.
        if (record.state === "unknown") this.cached = entry;
        else this.store(entry);
        return entry;
      })
      .finally(() => {
        this.loading = null;
      });
    return this.loading;
  }

  private hasRecordTable(): boolean {
    return (
      this.ctx.storage.sql
        .exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'token_record'")
        .toArray().length > 0
    );
  }

  private store(entry: CachedRecord): void {
    this.cached = entry;
    this.ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS token_record (id INTEGER PRIMARY KEY CHECK (id = 1), body TEXT NOT NULL, loaded_at INTEGER NOT NULL)",
    );
    this.ctx.storage.sql.exec(
      "INSERT INTO token_record (id, body, loaded_at) VALUES (1, ?, ?) ON CONFLICT(id) DO UPDATE SET body = excluded.body, loaded_at = excluded.loaded_at",
      JSON.stringify(entry.record),
      entry.loadedAt,
    );
  }
}
