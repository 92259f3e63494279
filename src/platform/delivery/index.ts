/**
 * The delivery engine (claim → send → record → retry → dead-letter) and the adapter a target
 * provides. See docs/design/delivery-engine.md.
 */
export {
  type Attempt,
  type ClaimedRow,
  type Closed,
  type DeliveryTarget,
  deadLetterBatch,
  deliverBatch,
  enqueue,
  requeueLost,
  retryDelay,
  type SendOptions,
  sendAndRecord,
  sendFirstAttempts,
  type Verdict,
  type WorkState,
} from "./engine";
export { groupById, type ParsedMessage, parseBatch } from "./messages";
export { inPool, PARALLEL_SENDS } from "./pool";
