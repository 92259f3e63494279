import { deadLetterBatch, deliverBatch } from "../../../platform/delivery";
import type { ServiceContext } from "../../../platform/service/context";
import { passbackTarget } from "./passback-target";

/**
 * The passback queue: each passback claimed (so a twin message does not send it again), sent once and
 * recorded by the delivery engine, its retry the message handed back with the retry's delay.
 */
export function deliverPassbacks(batch: MessageBatch<unknown>, ctx: ServiceContext): Promise<void> {
  return deliverBatch(ctx, passbackTarget, batch);
}

/** Passbacks whose messages the queue gave up on: closed as failed, visibly. */
export function deadLetterPassbacks(batch: MessageBatch<unknown>, ctx: ServiceContext): Promise<void> {
  return deadLetterBatch(ctx, passbackTarget, batch);
}
