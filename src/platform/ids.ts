import { monotonicFactory } from "ulidx";

// Monotonic within an isolate, so ids minted in the same millisecond still sort in creation order.
const ulid = monotonicFactory();

/** Sortable random ids with a readable type prefix, e.g. `tok_01JD3…`. */
export function newId(prefix: string): string {
  return `${prefix}_${ulid()}`;
}

export function nowIso(now = Date.now()): string {
  return new Date(now).toISOString().replace(/\.\d{3}Z$/, "Z");
}
