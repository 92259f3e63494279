import { monotonicFactory } from "ulidx";

// Monotonic within an isolate, so ids minted in the same millisecond still sort in creation order.
const ulid = monotonicFactory();

/** Sortable random ids with a readable type prefix, e.g. `tok_01JD3…`. */
export function newId(prefix: string): string {
  return `${prefix}_${ulid()}`;
}

/** ISO 8601 in UTC to the second (`2026-11-21T09:30:00Z`), the format of every stored time. */
let cachedSecond = Number.NaN;
let cachedText = "";

export function nowIso(now = Date.now()): string {
  // Runs per delivery and per row: the text of a second is computed once.
  const second = Math.floor(now / 1000);
  if (second !== cachedSecond) {
    cachedText = `${new Date(second * 1000).toISOString().slice(0, 19)}Z`;
    cachedSecond = second;
  }
  return cachedText;
}
