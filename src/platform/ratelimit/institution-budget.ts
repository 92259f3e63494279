import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";
import { PersistentWindow } from "./bucket-store";

/** What a token gate sends back of a lease it no longer needs: `units` granted at `second`. */
export interface LeaseReturn {
  second: number;
  units: number;
}

/**
 * A lease of the institution's budget: `granted` requests counted at `second` (0 when the budget
 * is spent), with the figures of the institution's window for the headers of a refusal.
 */
export interface LeaseGrant {
  granted: number;
  second: number;
  limit: number;
  remaining: number;
  resetSeconds: number;
  retryAfterSeconds: number;
  windowSeconds: number;
}

/**
 * One object per institution: the exact count of the requests its tokens together made in the
 * rolling window. Token gates do not call it per request; they lease chunks of the budget
 * (see institution-lease.ts and docs/design/institution-budget.md).
 */
export class InstitutionBudget extends DurableObject<Env> {
  private rate!: PersistentWindow;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      this.rate = await PersistentWindow.load(ctx.storage);
    });
  }

  /** Grants up to `wanted` requests of `limit` per window, after taking back `giveBack`. */
  async lease(
    limit: number,
    windowSeconds: number,
    wanted: number,
    giveBack?: LeaseReturn,
  ): Promise<LeaseGrant> {
    if (giveBack && giveBack.units > 0) this.rate.refund(giveBack.second, giveBack.units);
    const decision = this.rate.take(Date.now(), limit, windowSeconds, wanted);
    return {
      granted: decision.granted,
      second: decision.second,
      limit: decision.limit,
      remaining: decision.remaining,
      resetSeconds: decision.resetSeconds,
      retryAfterSeconds: decision.retryAfterSeconds,
      windowSeconds: decision.windowSeconds,
    };
  }

  /** Returns the unused rest of a lease (a gate whose principal was invalidated). */
  async giveBack(units: LeaseReturn): Promise<void> {
    if (units.units > 0) this.rate.refund(units.second, units.units);
  }
}
