/**
 * The delivery engine (claim → send → record → retry → dead-letter) and the adapter a target
 * provides. See docs/design/delivery-engine.md.
 */
export { deadLetterBatch, deliverBatch, requeueLost } from "./engine";
export { groupById, type ParsedMessage, parseBatch } from "./messages";
export { inPool, PARALLEL_SENDS } from "./pool";
export type { Attempt, Closed } from "./recorder";
export { openFirstAttempts, type SendOptions, sendAndRecord, sendFirstAttempts } from "./send";
export {
  type ClaimedRow,
  type DeliveryTarget,
  enqueue,
  retryDelay,
  type Verdict,
  type WorkState,
} from "./target";
