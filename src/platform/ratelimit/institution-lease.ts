import { clockNow } from "../service/clock";
import type { InstitutionBudget } from "./institution-budget";
import {
  INSTITUTION_POLICY,
  type LeaseGrant,
  type LeasePolicy,
  type LeaseReturn,
  type LeaseUser,
} from "./lease-terms";
import type { RateDecision } from "./window";

export { INSTITUTION_POLICY, USER_SHARE_POLICY } from "./lease-terms";

/** What a lease is counted against: the institution's budget and, for a member, the user's share of it. */
export interface LeaseLimits {
  /** The institution's budget per window. */
  limit: number;
  user?: LeaseUser;
}

/** A refusal of the institution's object: the decision of the limit that ran out, and its name. */
export interface LeaseRefusal {
  rate: RateDecision;
  policy: LeasePolicy;
}
/** The largest lease; also at most a fiftieth of the budget, so that idle leases strand little of it. */
const MAX_CHUNK = 1_000;
/** A refusal is remembered this long at most, then the institution is asked again. */
const REFUSAL_MEMORY_MS = 1_000;

/** Leases live a sixth of the window: 10 s of a 60 s window. */
function leaseLifetimeMs(windowSeconds: number): number {
  return (windowSeconds * 1000) / 6;
}

function maxChunk(limit: number): number {
  return Math.max(1, Math.min(MAX_CHUNK, Math.floor(limit / 50)));
}

/**
 * A token gate's share of its institution's budget (and of its user's share of it: one gate is one
 * token, of one user). Requests are counted against the lease in memory; the institution's object is called only when the lease is spent or has expired, and a
 * lease half spent is renewed in the background, so a busy token's requests wait for one Durable
 * Object call (its own gate) and no more. Chunks grow while they are used up and shrink while they
 * expire unused.
 */
export class InstitutionLease {
  private units = 0;
  private second = 0;
  private expiresAt = 0;
  /** Set from the first lease on: an eighth of the largest chunk. */
  private chunk = 0;
  private refusal: { until: number; at: number; grant: LeaseGrant } | null = null;
  private pending: Promise<LeaseGrant> | null = null;
  /** The user the units held were also counted against, so that their rest goes back to the share too. */
  private userId: string | undefined;
  /** The user's share as the last grant left it (`remaining` counts this lease's units as used). */
  private share: { limit: number; remaining: number; resetSeconds: number; at: number } | null = null;
  /** Bumped by `reset`: a grant asked for under the limits it dropped is given back, not kept. */
  private generation = 0;
  /** A swap is out: the units held were given back in its call already. */
  private swapping = false;

  constructor(private readonly budget: () => DurableObjectStub<InstitutionBudget>) {}

  /**
   * Takes one request of the budget. Null when admitted, else the refusal's decision. Synchronous
   * (no await) whenever the lease holds a unit.
   */
  take(nowMs: number, limits: LeaseLimits, windowSeconds: number): null | Promise<LeaseRefusal | null> {
    if (this.holdsUnit(nowMs)) {
      this.useUnit(nowMs, limits, windowSeconds);
      return null;
    }
    return this.takeAfterRenewal(limits, windowSeconds);
  }

  /**
   * What the user's share has left for this token, as far as the gate knows: what the last grant
   * left of it plus the units this lease still holds. Other tokens of the same user may have spent
   * some since (at most a lease lifetime ago), so it is an estimate, for the headers only. Null
   * unless it is below `tokenRemaining` (the token's own limit is then the one to announce), and
   * before any grant that counted against a share.
   */
  shareIfTighter(nowMs: number, windowSeconds: number, tokenRemaining: number): RateDecision | null {
    if (!this.share) return null;
    const remaining = Math.min(this.share.limit, this.share.remaining + Math.max(0, this.units));
    if (remaining >= tokenRemaining) return null;
    const elapsed = Math.floor((nowMs - this.share.at) / 1000);
    const resetSeconds = remaining < this.share.limit ? Math.max(1, this.share.resetSeconds - elapsed) : 0;
    return {
      allowed: true,
      limit: this.share.limit,
      remaining,
      resetSeconds,
      retryAfterSeconds: 0,
      windowSeconds,
    };
  }

  /** Drops the lease (a plan change); its unused units go back to the institution. */
  reset(): void {
    const unused = this.swapping ? undefined : this.unused();
    this.swapping = false;
    this.generation += 1;
    this.pending = null;
    this.share = null;
    this.units = 0;
    this.expiresAt = 0;
    this.chunk = 0;
    this.refusal = null;
    if (unused)
      void this.budget()
        .giveBack(unused)
        .catch(() => undefined);
  }

  private holdsUnit(nowMs: number): boolean {
    return this.units > 0 && nowMs < this.expiresAt;
  }

  /**
   * Takes a unit. Once half the chunk is used, grows it and renews in the background; a lease in
   * use is also renewed in the background in the last quarter of its life, so that a busy token's
   * requests never wait for an expired one.
   */
  private useUnit(nowMs: number, limits: LeaseLimits, windowSeconds: number): void {
    this.units -= 1;
    if (this.pending) return;
    const halfUsed = this.units * 2 < this.chunk;
    const ageing = this.expiresAt - nowMs < leaseLifetimeMs(windowSeconds) / 4;
    if (!halfUsed && !ageing) return;
    if (halfUsed) this.chunk = Math.min(maxChunk(limits.limit), this.chunk * 2);
    void this.renew(nowMs, limits, windowSeconds, !halfUsed).catch(() => undefined);
  }

  private async takeAfterRenewal(limits: LeaseLimits, windowSeconds: number): Promise<LeaseRefusal | null> {
    for (;;) {
      const refused = this.remembered(clockNow());
      if (refused) return refused;
      const generation = this.generation;
      let grant: LeaseGrant;
      try {
        grant = await (this.pending ?? this.renew(clockNow(), limits, windowSeconds));
      } catch (error) {
        // The per-token limit still holds; an unreachable budget must not take every token down.
        console.error(
          JSON.stringify({ level: "error", message: "institution budget unreachable", error: String(error) }),
        );
        return null;
      }
      const now = clockNow();
      if (this.holdsUnit(now)) {
        this.useUnit(now, limits, windowSeconds);
        return null;
      }
      // Reset while the call was out: its answer was for the limits reset() dropped.
      if (generation !== this.generation) continue;
      if (grant.granted === 0) return refusalOf(grant, 0);
      // Concurrent requests took this grant's units: ask again.
    }
  }

  /**
   * Asks the institution for a chunk. An expired lease's rest is given back in the same call; so is
   * an ageing lease's (`swap`), which is replaced by a fresh one rather than extended, so that no
   * unit is used longer than a lease lifetime after it was counted.
   */
  private renew(
    nowMs: number,
    limits: LeaseLimits,
    windowSeconds: number,
    swap = false,
  ): Promise<LeaseGrant> {
    const { limit, user } = limits;
    this.userId = user?.id;
    if (this.chunk === 0) this.chunk = Math.max(1, Math.floor(maxChunk(limit) / 8));
    const expired = nowMs >= this.expiresAt;
    if (expired && this.units > 0) this.chunk = Math.max(1, Math.floor(this.chunk / 2));
    const giveBack = expired || swap ? this.unused() : undefined;
    if (expired) this.units = 0;
    const heldWhenAsked = this.units;
    const generation = this.generation;
    this.swapping = swap && giveBack !== undefined;
    const request = this.budget()
      .lease(limit, windowSeconds, Math.min(this.chunk, maxChunk(limit)), giveBack, user)
      .then((grant) => {
        if (generation !== this.generation) {
          // Reset (a plan change) while the call was out: the grant was counted under the old limits,
          // so its units go back and neither they nor its share are kept.
          if (grant.granted > 0) {
            const stale: LeaseReturn = { second: grant.second, units: grant.granted };
            if (user) stale.userId = user.id;
            void this.budget()
              .giveBack(stale)
              .catch(() => undefined);
          }
          return grant;
        }
        const now = clockNow();
        if (swap) {
          // The units given back are gone; those used while the call was out count against the new.
          this.units = Math.max(0, grant.granted - (heldWhenAsked - this.units));
        }
        if (grant.granted > 0) {
          if (!swap) this.units += grant.granted;
          this.second = grant.second;
          this.expiresAt = now + leaseLifetimeMs(windowSeconds);
          this.refusal = null;
          this.share = grant.share ? { ...grant.share, at: now } : null;
        } else {
          const memory = Math.min(REFUSAL_MEMORY_MS, grant.retryAfterSeconds * 1000);
          this.refusal = { until: now + memory, at: now, grant };
        }
        return grant;
      })
      .finally(() => {
        if (this.pending !== request) return;
        this.pending = null;
        this.swapping = false;
      });
    this.pending = request;
    return request;
  }

  private remembered(nowMs: number): LeaseRefusal | null {
    if (!this.refusal || nowMs >= this.refusal.until) return null;
    return refusalOf(this.refusal.grant, nowMs - this.refusal.at);
  }

  private unused(): LeaseReturn | undefined {
    if (this.units <= 0) return undefined;
    return this.userId === undefined
      ? { second: this.second, units: this.units }
      : { second: this.second, units: this.units, userId: this.userId };
  }
}

/** The institution's refusal as a rate decision, its waits shortened by `elapsedMs`. */
function refusalOf(grant: LeaseGrant, elapsedMs: number): LeaseRefusal {
  const elapsed = Math.floor(elapsedMs / 1000);
  return {
    rate: {
      allowed: false,
      limit: grant.limit,
      remaining: 0,
      retryAfterSeconds: Math.max(1, grant.retryAfterSeconds - elapsed),
      resetSeconds: Math.max(1, grant.resetSeconds - elapsed),
      windowSeconds: grant.windowSeconds,
    },
    policy: grant.policy ?? INSTITUTION_POLICY,
  };
}
