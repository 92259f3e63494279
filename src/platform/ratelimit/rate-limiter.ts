import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";
import { clockNow } from "../service/clock";
import { PersistentWindow } from "./bucket-store";
import type { RateDecision } from "./window";

/** A plain counter for keys that are not tokens: client IPs, sign-in failures. */
export class RateLimiter extends DurableObject<Env> {
  private rate!: PersistentWindow;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      this.rate = await PersistentWindow.load(ctx.storage);
    });
  }

  async consume(limit: number, windowSeconds: number): Promise<RateDecision & { second: number }> {
    return this.rate.consume(clockNow(), limit, windowSeconds);
  }

  async refund(second: number): Promise<void> {
    this.rate.refund(second);
  }

  /** Forgets every counted hit (a successful sign-in resets the failures of its e-mail and address). */
  async reset(): Promise<void> {
    this.rate.clear();
  }
}
