/**
 * The time services read through `ctx.now()`. In a deployment it is the system clock. Tests move it
 * forward with `advanceClock` instead of sleeping out a rate-limit window or a retry delay: the test
 * pool runs the worker, its Durable Objects and the tests in one isolate, so they share this module.
 */
let offsetMs = 0;

/** Milliseconds since the epoch, as the service context's `now()` answers. */
export function clockNow(): number {
  return Date.now() + offsetMs;
}

/** Tests only: every later `clockNow()` is `ms` later than the system clock would say. */
export function advanceClock(ms: number): void {
  offsetMs += ms;
}

/** Tests only: back to the system clock. */
export function resetClock(): void {
  offsetMs = 0;
}
