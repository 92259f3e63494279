import type { AttemptArchiveFile } from "../../../db/schema";
import type { ServiceContext } from "../../../platform/service/context";
import { type AttemptRow, compareKeys, gunzip, parseNdjson } from "./format";
import { type AttemptKey, filesFrom } from "./sql";

/**
 * Reading the cold tier: the attempts of an institution in the export order, a page at a time, as the
 * readers of old attempts (the activity export, the xAPI back-fill) read D1. A reader asks both tiers
 * for a page after its key and merges them (`mergeTiers`): a row is in one tier, or for a moment in
 * both (written and verified, not yet deleted), never in neither.
 */

/** The last files read, by object key and checksum: consecutive pages mostly read the same file. */
const recent = new Map<string, AttemptRow[]>();
const RECENT_FILES = 2;

/** The rows of a verified file. */
export async function readFile(ctx: ServiceContext, file: AttemptArchiveFile): Promise<AttemptRow[]> {
  const cacheKey = `${file.objectKey} ${file.sha256}`;
  const cached = recent.get(cacheKey);
  if (cached) return cached;
  const object = await ctx.env.EXPORTS_BUCKET.get(file.objectKey);
  if (!object) throw new Error(`the cold-tier file ${file.objectKey} is missing`);
  const rows = parseNdjson(await gunzip(object.body));
  recent.set(cacheKey, rows);
  for (const key of recent.keys()) {
    if (recent.size <= RECENT_FILES) break;
    recent.delete(key);
  }
  return rows;
}

export interface ColdScope {
  institutionId: string;
  /** The first UTC day that can hold a wanted row (from the reader's lower bound), or null. */
  fromDay: string | null;
  /** The last UTC day that can hold a wanted row (from the reader's upper bound), or null. */
  toDay: string | null;
  /** Whether the reader wants the row (its own filters: range, members, courses). */
  keep(row: AttemptRow): boolean;
}

const FILES_PER_QUERY = 20;

/** Whether any archived file of the scope can hold rows after `after`: else D1 alone answers. */
export async function hasColdRows(
  ctx: ServiceContext,
  scope: ColdScope,
  after: AttemptKey | null,
): Promise<boolean> {
  return (await filesFrom(ctx.db, { ...scope, after }, 1)).length > 0;
}

/** Up to `limit` archived rows after `after` that the scope keeps, in key order. */
export async function coldPage(
  ctx: ServiceContext,
  scope: ColdScope,
  after: AttemptKey | null,
  limit: number,
): Promise<AttemptRow[]> {
  const out: AttemptRow[] = [];
  let position = after;
  for (;;) {
    const files = await filesFrom(ctx.db, { ...scope, after: position }, FILES_PER_QUERY);
    for (const file of files) {
      for (const row of await readFile(ctx, file)) {
        if (position && compareKeys(row, position) <= 0) continue;
        if (!scope.keep(row)) continue;
        out.push(row);
        if (out.length === limit) return out;
      }
      position = { occurredAt: file.lastOccurredAt, id: file.lastId };
    }
    if (files.length < FILES_PER_QUERY) return out;
  }
}

/**
 * The first `limit` rows of two pages read after the same key, each in key order: one row per id (a
 * row in both tiers is the same attempt).
 */
export function mergeTiers<T>(
  hot: readonly T[],
  cold: readonly T[],
  limit: number,
  key: (row: T) => AttemptKey,
): T[] {
  const out: T[] = [];
  let h = 0;
  let c = 0;
  while (out.length < limit && (h < hot.length || c < cold.length)) {
    const a = hot[h];
    const b = cold[c];
    if (a === undefined) {
      out.push(b as T);
      c++;
      continue;
    }
    if (b === undefined) {
      out.push(a);
      h++;
      continue;
    }
    const order = compareKeys(key(a), key(b));
    if (order <= 0) {
      out.push(a);
      h++;
      if (order === 0) c++;
    } else {
      out.push(b);
      c++;
    }
  }
  return out;
}
