import { and, gt, isNull, type SQL } from "drizzle-orm";
import type { BatchItem, BatchResponse } from "drizzle-orm/batch";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { randomBytes, sha256Hex, toBase64Url } from "../crypto/encoding";
import type { Database } from "../db";

/**
 * Single-use, short-lived secrets kept server-side: the one mechanism behind a browser flow's pending
 * request (LTI's login state and nonce, SSO's state, nonce and PKCE verifier) and the code a finished
 * flow hands the browser in a URL fragment (LTI launch codes, SSO sign-in codes). A row carries
 * `expires_at` and `used_at` (ms); taking it is one conditional UPDATE … RETURNING, so of two
 * requests racing with the same value exactly one gets the row. See docs/design/sso-signin.md.
 */

/** 256 random bits, base64url: a state, nonce, code or PKCE verifier. */
export function newSecret(): string {
  return toBase64Url(randomBytes(32));
}

/** A code for a URL fragment and the hash its row is stored under (the code itself is never stored). */
export async function newCode(): Promise<{ code: string; codeHash: string }> {
  const code = newSecret();
  return { code, codeHash: await sha256Hex(code) };
}

export function codeHash(code: string): Promise<string> {
  return sha256Hex(code);
}

type SingleUseTable = SQLiteTable & { usedAt: SQLiteColumn; expiresAt: SQLiteColumn };

/**
 * What taking a single-use row found: `taken` (this caller now holds it), or the row as it is and why
 * it was not taken (`used`, `expired`, or `elsewhere`: unused and live but outside `scope`), or
 * nothing. A row both used (or expired) and outside `scope` reads `used` (`expired`): a caller that
 * distinguishes scope checks it on the row first.
 */
export type Redeemed<Row> =
  | { outcome: "taken"; row: Row }
  | { outcome: "used" | "expired" | "elsewhere"; row: Row }
  | { outcome: "unknown"; row: null };

/**
 * Takes the row `key` names (single use): sets `used_at` where it is unused, unexpired at `now` and
 * within `scope` (e.g. issued for this callback). When that changes nothing, reads the row to say why.
 * `alongside`: reads that ride in the same D1 batch as the taking (one round trip for both, e.g. the
 * settings the rest of the request needs); their results come back as `alongside`, in order.
 */
export async function redeemOnce<T extends SingleUseTable, A extends readonly BatchItem<"sqlite">[] = []>(
  db: Database,
  table: T,
  input: { key: SQL; scope?: SQL; now: number },
  alongside?: A,
): Promise<Redeemed<T["$inferSelect"]> & { alongside: BatchResponse<A> }> {
  const { key, scope, now } = input;
  // drizzle cannot type a column set on a generic table: the columns are the table's own.
  const t: SingleUseTable = table;
  const take = db
    .update(table)
    .set({ usedAt: now } as never)
    .where(and(key, scope, isNull(t.usedAt), gt(t.expiresAt, now)))
    .returning();
  const [takenRows, ...read] = (await db.batch([take, ...(alongside ?? [])] as never)) as unknown as [
    T["$inferSelect"][],
    ...BatchResponse<A>,
  ];
  const others = read as unknown as BatchResponse<A>;
  const [taken] = takenRows;
  if (taken) return { outcome: "taken", row: taken, alongside: others };
  const row = (await db
    .select()
    .from(table as SQLiteTable)
    .where(key)
    .get()) as (T["$inferSelect"] & { usedAt: number | null; expiresAt: number }) | undefined;
  if (!row) return { outcome: "unknown", row: null, alongside: others };
  if (row.usedAt !== null) return { outcome: "used", row, alongside: others };
  if (row.expiresAt <= now) return { outcome: "expired", row, alongside: others };
  // Unused and live, so `scope` excluded it: the caller's scope check says what that means.
  return { outcome: "elsewhere", row, alongside: others };
}
