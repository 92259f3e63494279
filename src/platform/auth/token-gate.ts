import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";
import { config } from "../config";
import { PersistentWindow } from "../ratelimit/bucket-store";
import { InstitutionLease, type LeaseRefusal, USER_SHARE_POLICY } from "../ratelimit/institution-lease";
import { clockNow } from "../service/clock";
import { type AdmitAnswer, type AdmitAnswerFormat, encodeAdmittedCurrent } from "./admit-answer";
import { type InstitutionBudgetRule, institutionBudgetFor } from "./principal";
import { loadTokenRecord, type TokenRecord } from "./principal-store";

/** A cached principal older than this is re-read from D1 before the request is answered. */
const PRINCIPAL_MAX_AGE_MS = 60_000;
/** From this age on, a request re-reads it in the background, so that busy tokens never wait for D1. */
const PRINCIPAL_REFRESH_MS = 45_000;
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
 * is pushed here before D1 is written, and a revoked object never comes back to life. Requests also
 * count against the institution's budget, through a lease (platform/ratelimit/institution-lease.ts).
 */
export class TokenGate extends DurableObject<Env> {
  private rate!: PersistentWindow;
  private cached: CachedRecord | null;
  private loading: Promise<CachedRecord> | null = null;
  /** Bumped by `invalidate`, so that a D1 read begun before it is not kept. */
  private generation = 0;
  private lastTouchAt = 0;
  private readonly windowSeconds: number;
  private lease: InstitutionLease | null = null;

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
    const cached = await this.current(tokenHash);
    const now = clockNow();
    const record = cached.record;
    if (record.state !== "active") return { outcome: "unauthenticated", reason: record.state };
    const { principal } = record;
    if (cached.expiresAtMs !== null && cached.expiresAtMs <= now) {
      return { outcome: "unauthenticated", reason: "expired" };
    }
    const rate = this.rate.consume(now, principal.rateLimitPerMinute, this.windowSeconds);
    if (!rate.allowed) return { outcome: "rate_limited", rate };
    const budget = institutionBudgetFor(principal);
    const institutionTake = budget ? this.takeInstitutionBudget(budget, now) : null;
    // Awaited only when the lease had to be renewed: the hot path stays free of extra ticks.
    const refusal = institutionTake === null ? null : await institutionTake;
    if (refusal) {
      this.rate.refund(rate.second);
      return { outcome: "rate_limited", rate: refusal.rate, policy: refusal.policy };
    }
    const touch = now - this.lastTouchAt >= TOUCH_INTERVAL_MS;
    if (touch) this.lastTouchAt = now;
    const version = cached.loadedAt;
    // The headers describe the limit closer to running out: the user's share, once the user's other
    // tokens have spent more of it than this token has of its own. That rarer answer is an object.
    const share = budget ? this.lease?.shareIfTighter(now, this.windowSeconds, rate.remaining) : null;
    if (share) {
      const answer = { outcome: "admitted", version, rate: share, touch, policy: USER_SHARE_POLICY } as const;
      return knownVersion === version ? answer : { ...answer, principal };
    }
    if (knownVersion !== version) return { outcome: "admitted", version, principal, rate, touch };
    return format === "compact"
      ? encodeAdmittedCurrent(rate, touch)
      : { outcome: "admitted", version, rate, touch };
  }

  /** Called before the D1 row is marked revoked, so the very next request is refused. */
  async revoke(): Promise<void> {
    this.generation += 1;
    this.store(cachedRecord({ state: "revoked" }, clockNow()));
  }

  /**
   * Forgets the cached principal (role, plan, limit or status changed in D1): the next request
   * re-reads it before it is answered. Call after the D1 change is written.
   */
  async invalidate(): Promise<void> {
    if (this.cached?.record.state === "revoked") return;
    this.generation += 1;
    this.loading = null;
    if (this.hasRecordTable()) this.ctx.storage.sql.exec("DELETE FROM token_record");
    this.cached = null;
    this.lease?.reset();
  }

  /** The cached record, re-read first when it is too old to answer with. */
  private async current(tokenHash: string): Promise<CachedRecord> {
    const cached = this.cached;
    if (!cached) return this.load(tokenHash);
    // A revocation is final; nothing in D1 can bring the token back.
    if (cached.record.state === "revoked") return cached;
    const age = clockNow() - cached.loadedAt;
    if (age > PRINCIPAL_MAX_AGE_MS) return this.load(tokenHash);
    if (age > PRINCIPAL_REFRESH_MS && !this.loading) void this.load(tokenHash).catch(() => undefined);
    return cached;
  }

  /**
   * Null when the institution's budget and the user's share of it admit the request (or none
   * applies), else the refusal of the one that ran out.
   */
  private takeInstitutionBudget(
    budget: InstitutionBudgetRule,
    now: number,
  ): null | Promise<LeaseRefusal | null> {
    this.lease ??= new InstitutionLease(() =>
      this.env.INSTITUTION_BUDGET.get(this.env.INSTITUTION_BUDGET.idFromName(budget.institutionId)),
    );
    return this.lease.take(
      now,
      { limit: budget.limit, user: { id: budget.userId, limit: budget.userLimit } },
      this.windowSeconds,
    );
  }

  private load(tokenHash: string): Promise<CachedRecord> {
    // Concurrent requests share one D1 read.
    if (this.loading) return this.loading;
    const generation = this.generation;
    // At the primary: a token created or revoked a moment ago is what the gate must see.
    const loading = loadTokenRecord(this.env, tokenHash)
      .then((record) => {
        // A revocation that landed while D1 was being read wins over what D1 said.
        if (this.cached?.record.state === "revoked") return this.cached;
        const entry = cachedRecord(record, clockNow());
        // Invalidated meanwhile: what D1 said may predate the change; the next request reads again.
        if (generation !== this.generation) return entry;
        // A token D1 does not know was most likely guessed: remembered while this object lives,
        // never stored, so guesses leave nothing behind.
        if (record.state === "unknown") this.cached = entry;
        else this.store(entry);
        return entry;
      })
      .finally(() => {
        if (this.loading === loading) this.loading = null;
      });
    this.loading = loading;
    return loading;
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
