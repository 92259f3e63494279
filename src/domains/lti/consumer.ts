import type { Env } from "../../env";
import { deadLetterBatch, deliverBatch } from "../../platform/delivery";
import { passbackTarget } from "./passback-target";

/**
 * The passback queue: each passback claimed (so a twin message does not send it again), sent once and
 * recorded by the delivery engine, its retry the message handed back with the retry's delay.
 */
export function deliverPassbacks(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  return deliverBatch(passbackTarget, batch, env);
}

/** Passbacks whose messages the queue gave up on: closed as failed, visibly. */
export function deadLetterPassbacks(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  return deadLetterBatch(passbackTarget, batch, env);
}
