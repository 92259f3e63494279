import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";
import { clockNow } from "../service/clock";
import { PersistentWindow } from "./bucket-store";
import {
  INSTITUTION_POLICY,
  type LeaseGrant,
  type LeaseReturn,
  type LeaseUser,
  USER_SHARE_POLICY,
} from "./lease-terms";

/** Storage key prefix of a user's window; the id's length keeps one user's keys apart from another's. */
function userPrefix(userId: string): string {
  return `user:${userId.length}:${userId}:`;
}

/**
 * One object per institution: the exact count of the requests its tokens together made in the
 * rolling window, and of each user's share of it (all the user's tokens together). Token gates do
 * not call it per request; they lease chunks of the budget, each counted against both windows in the
 * same call (see institution-lease.ts and docs/design/institution-budget.md).
 */
export class InstitutionBudget extends DurableObject<Env> {
  private rate!: PersistentWindow;
  /** The windows of the users counted lately; a window with nothing left in it is forgotten. */
  private readonly users = new Map<string, PersistentWindow>();
  private sweptAt = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      this.rate = await PersistentWindow.load(ctx.storage);
    });
  }

  /**
   * Grants up to `wanted` requests of `limit` per window, and of `user.limit` for the user's tokens
   * together, after taking back `giveBack`.
   */
  async lease(
    limit: number,
    windowSeconds: number,
    wanted: number,
    giveBack?: LeaseReturn,
    user?: LeaseUser,
  ): Promise<LeaseGrant> {
    if (giveBack) await this.refund(giveBack);
    const now = clockNow();
    this.forgetIdleUsers(now, windowSeconds);
    const userWindow = user ? await this.userWindow(user.id) : null;
    let asked = wanted;
    if (user && userWindow) {
      const share = userWindow.peek(now, user.limit, windowSeconds);
      if (share.remaining === 0) {
        return { granted: 0, second: Math.floor(now / 1000), ...share, policy: USER_SHARE_POLICY };
      }
      asked = Math.min(wanted, share.remaining);
    }
    const decision = this.rate.take(now, limit, windowSeconds, asked);
    const share =
      userWindow && user && decision.granted > 0
        ? userWindow.take(now, user.limit, windowSeconds, decision.granted)
        : null;
    return {
      granted: decision.granted,
      second: decision.second,
      limit: decision.limit,
      remaining: decision.remaining,
      resetSeconds: decision.resetSeconds,
      retryAfterSeconds: decision.retryAfterSeconds,
      windowSeconds: decision.windowSeconds,
      policy: INSTITUTION_POLICY,
      ...(share
        ? { share: { limit: share.limit, remaining: share.remaining, resetSeconds: share.resetSeconds } }
        : {}),
    };
  }

  /** Returns the unused rest of a lease (a gate whose principal was invalidated). */
  async giveBack(units: LeaseReturn): Promise<void> {
    await this.refund(units);
  }

  private async refund({ second, units, userId }: LeaseReturn): Promise<void> {
    if (units <= 0) return;
    this.rate.refund(second, units);
    if (userId === undefined) return;
    const window = await this.userWindow(userId);
    window.refund(second, units);
  }

  /**
   * The user's window, read from storage the first time after the object started. (Storage reads
   * hold the object's input gate, so no other lease runs in between.)
   */
  private async userWindow(userId: string): Promise<PersistentWindow> {
    let window = this.users.get(userId);
    if (!window) {
      window = await PersistentWindow.load(this.ctx.storage, userPrefix(userId));
      this.users.set(userId, window);
    }
    return window;
  }

  /**
   * Once a window, forgets the users with nothing left in theirs (their emptied buckets are deleted
   * from storage by then), so that memory follows the users of the last window, not all users ever.
   */
  private forgetIdleUsers(nowMs: number, windowSeconds: number): void {
    if (nowMs - this.sweptAt < windowSeconds * 1000) return;
    this.sweptAt = nowMs;
    for (const [userId, window] of this.users) {
      window.peek(nowMs, 1, windowSeconds);
      if (window.idle) this.users.delete(userId);
    }
  }
}
