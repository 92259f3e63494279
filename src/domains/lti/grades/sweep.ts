import { requeueLost } from "../../../platform/delivery";
import type { ServiceContext } from "../../../platform/service/context";
import { passbackTarget } from "./passback-target";

/**
 * The minute cron's safety net under the passback queue: a passback whose message was lost is queued
 * again about a minute after its attempt's lease or its due time ran out (the delivery engine's
 * `requeueLost`; the consumer's claim makes a resend that was not needed harmless). Returns how many.
 */
export function requeueStalledPassbacks(ctx: ServiceContext): Promise<number> {
  return requeueLost(ctx, passbackTarget);
}
