import { and, asc, eq, exists, lt, or, type SQL, sql } from "drizzle-orm";
import {
  type AttemptArchiveFile,
  attemptArchiveClaims,
  attemptArchiveFiles,
  attempts,
} from "../../../db/schema";
import { batchGuard, chunk } from "../../../platform/batch";
import { formatDay } from "../../../platform/dates";
import { inJsonList } from "../../../platform/db";
import { newId, nowIso } from "../../../platform/ids";
import { commit } from "../../../platform/service/commit";
import type { ServiceContext } from "../../../platform/service/context";
import {
  type AttemptRow,
  CONTENT_ENCODING,
  CONTENT_TYPE,
  compareKeys,
  gunzip,
  gzip,
  ndjson,
  objectKey,
  SCHEMA_VERSION,
  sha256,
} from "./format";
import { readFile } from "./read";
import { type AttemptKey, dayAttempts, type Eligibility, institutionsWithColdAttempts } from "./sql";

/**
 * The cold tier's mover, a minute sweep (docs/design/cold-tier.md). Each run takes a bounded number of
 * steps; a step moves at most `PART_ROWS` attempts of one institution and day into one file:
 *
 * 1. claim the (institution, day) so that no other run writes its files;
 * 2. find the part the institution's first eligible attempt belongs to: the first part whose last key
 *    is at or after it (a late attempt for an archived day), else a new part after the last one;
 * 3. the part's rows: its file's rows (if any) and the eligible D1 rows in its range, one row per id,
 *    in key order, written as gzip NDJSON under a key fixed by (institution, day, part);
 * 4. read the object back, decompress it, and check its row count and SHA-256 against the rows;
 * 5. in one D1 batch, still holding the claim: the manifest row and the deletion of exactly the D1
 *    rows (by id) that the verified file holds.
 *
 * A crash anywhere leaves the D1 rows in place until step 5, which is atomic; a rerun writes the same
 * file again (the rows it held plus the D1 rows, deduplicated by id), so nothing is lost or doubled.
 */

/** Attempts per file (a new part), about 1.5 MB of NDJSON and 150 KB of gzip. */
export const PART_ROWS = 5_000;
/** Steps (files written) per cron run. */
export const STEPS_PER_RUN = 12;
/** How long a claim on a day lasts: far longer than one step. */
const CLAIM_MS = 5 * 60_000;
const DAY_MS = 86_400_000;

export type StepOutcome = { institutionId: string; day: string; part: number; rows: number; deleted: number };

/**
 * Which attempts may move at `now`: those of UTC days that ended at least the window ago, recorded at
 * least the window ago (so that a resent attempt still meets its D1 row, and late ones wait too).
 */
export function eligibility(ctx: ServiceContext): Eligibility {
  const now = ctx.now();
  const windowMs = ctx.config.coldTier.hotDays * DAY_MS;
  return { beforeDay: formatDay(now - windowMs), recordedBefore: nowIso(now - windowMs) };
}

/** The minute sweep: moves up to `STEPS_PER_RUN` files' worth of old attempts to R2. */
export async function archiveOldAttempts(ctx: ServiceContext, partRows = PART_ROWS): Promise<StepOutcome[]> {
  const eligible = eligibility(ctx);
  const done: StepOutcome[] = [];
  const skipped = new Set<string>();
  while (done.length < STEPS_PER_RUN) {
    const candidates = await institutionsWithColdAttempts(ctx.db, eligible, STEPS_PER_RUN + skipped.size);
    const work = candidates.filter((c) => c.oldest !== null && !skipped.has(c.institutionId));
    if (work.length === 0) break;
    for (const { institutionId, oldest } of work) {
      if (done.length >= STEPS_PER_RUN) break;
      const space = (oldest ?? "").indexOf(" ");
      const first = { occurredAt: (oldest ?? "").slice(0, space), id: (oldest ?? "").slice(space + 1) };
      const outcome = await moveStep(ctx, institutionId, first, eligible, partRows).catch(
        (error: unknown) => {
          // Nothing was deleted (step 5 did not run); the day is tried again once its claim runs out.
          console.error(
            JSON.stringify({
              level: "error",
              message: "cold-tier step failed",
              institutionId,
              error: String(error),
            }),
          );
          return null;
        },
      );
      // A day another run holds (or one that failed): this run leaves the institution alone.
      if (outcome === null) skipped.add(institutionId);
      else done.push(outcome);
    }
  }
  return done;
}

/** One step for an institution whose first eligible attempt is `first`; null when another run holds the day. */
export async function moveStep(
  ctx: ServiceContext,
  institutionId: string,
  first: AttemptKey,
  eligible: Eligibility,
  partRows = PART_ROWS,
): Promise<StepOutcome | null> {
  const day = first.occurredAt.slice(0, 10);
  const claim = await claimDay(ctx, institutionId, day);
  if (!claim) return null;
  const parts = await ctx.db
    .select()
    .from(attemptArchiveFiles)
    .where(and(eq(attemptArchiveFiles.institutionId, institutionId), eq(attemptArchiveFiles.day, day)))
    .orderBy(asc(attemptArchiveFiles.part));
  const index = parts.findIndex((p) => compareKeys(lastKey(p), first) >= 0);
  const target = index >= 0 ? parts[index] : undefined;
  const before = index > 0 ? parts[index - 1] : index < 0 ? parts.at(-1) : undefined;
  const part = target?.part ?? parts.length + 1;
  const hot = await dayAttempts(
    ctx.db,
    { institutionId, day, after: before ? lastKey(before) : null, upTo: target ? lastKey(target) : null },
    eligible,
    partRows,
  );
  if (hot.length === 0) return { institutionId, day, part, rows: target?.rows ?? 0, deleted: 0 };
  const held = target ? await readFile(ctx, target) : [];
  const rows = union(held, hot);
  const written = await writeVerified(ctx, claim, { institutionId, day, part }, rows);

  const f = attemptArchiveFiles;
  const manifest = ctx.db
    .insert(f)
    .values({ ...written, institutionId, day, part })
    .onConflictDoUpdate({ target: [f.institutionId, f.day, f.part], set: written });
  await commit(ctx, {
    statements: [
      batchGuard(
        ctx.db,
        exists(
          ctx.db
            .select({ one: sql`1` })
            .from(attemptArchiveClaims)
            .where(heldClaim(institutionId, day, claim.leaseId)),
        ),
      ),
      manifest,
      // Exactly the rows the verified file holds; a row recorded meanwhile stays for the next step.
      ...chunk(
        hot.map((row) => row.id),
        500,
      ).map((ids) => ctx.db.delete(attempts).where(inJsonList(attempts.id, ids))),
      ctx.db.delete(attemptArchiveClaims).where(heldClaim(institutionId, day, claim.leaseId)),
    ],
  });
  return { institutionId, day, part, rows: rows.length, deleted: hot.length };
}

function lastKey(file: AttemptArchiveFile): AttemptKey {
  return { occurredAt: file.lastOccurredAt, id: file.lastId };
}

/** The file's rows and the D1 rows, one per id (they are the same attempt), in key order. */
function union(held: readonly AttemptRow[], hot: readonly AttemptRow[]): AttemptRow[] {
  const byId = new Map<string, AttemptRow>();
  for (const row of held) byId.set(row.id, row);
  for (const row of hot) byId.set(row.id, row);
  return [...byId.values()].sort(compareKeys);
}

interface Claim {
  leaseId: string;
  institutionId: string;
  day: string;
}

function heldClaim(institutionId: string, day: string, leaseId: string): SQL {
  const c = attemptArchiveClaims;
  return and(eq(c.institutionId, institutionId), eq(c.day, day), eq(c.leaseId, leaseId)) ?? sql`0`;
}

/** Takes the day if nobody holds it or its holder's lease ran out. */
async function claimDay(ctx: ServiceContext, institutionId: string, day: string): Promise<Claim | null> {
  const leaseId = newId("arc");
  const c = attemptArchiveClaims;
  const now = ctx.now();
  const taken = await ctx.db
    .insert(c)
    .values({ institutionId, day, leaseId, leaseUntil: now + CLAIM_MS })
    .onConflictDoUpdate({
      target: [c.institutionId, c.day],
      set: { leaseId, leaseUntil: now + CLAIM_MS },
      setWhere: or(lt(c.leaseUntil, now), eq(c.leaseId, leaseId)),
    })
    .returning({ leaseId: c.leaseId });
  return taken[0]?.leaseId === leaseId ? { leaseId, institutionId, day } : null;
}

/** Renews the claim before a write to R2; a mover whose claim was taken over stops here. */
async function holdClaim(ctx: ServiceContext, claim: Claim): Promise<void> {
  const renewed = await ctx.db
    .update(attemptArchiveClaims)
    .set({ leaseUntil: ctx.now() + CLAIM_MS })
    .where(heldClaim(claim.institutionId, claim.day, claim.leaseId))
    .returning({ leaseId: attemptArchiveClaims.leaseId });
  if (renewed.length === 0)
    throw new Error(`lost the cold-tier claim on ${claim.institutionId} ${claim.day}`);
}

/** Writes the part's file and reads it back; throws unless it holds exactly `rows`. */
async function writeVerified(
  ctx: ServiceContext,
  claim: Claim,
  at: { institutionId: string; day: string; part: number },
  rows: AttemptRow[],
) {
  const bucket = ctx.env.EXPORTS_BUCKET;
  const key = objectKey(at.institutionId, at.day, at.part);
  const plain = ndjson(rows);
  const digest = await sha256(plain);
  const body = await gzip(plain);
  await holdClaim(ctx, claim);
  await bucket.put(key, body, {
    httpMetadata: { contentType: CONTENT_TYPE, contentEncoding: CONTENT_ENCODING },
    customMetadata: { schema: `attempts/v${SCHEMA_VERSION}`, rows: String(rows.length), sha256: digest },
  });
  const stored = await bucket.get(key);
  if (!stored) throw new Error(`the cold-tier file ${key} is not there after writing it`);
  const back = await gunzip(stored.body);
  const lines = back.reduce((n, byte) => (byte === 0x0a ? n + 1 : n), 0);
  if (lines !== rows.length || (await sha256(back)) !== digest) {
    throw new Error(`the cold-tier file ${key} does not read back as written`);
  }
  const firstRow = rows[0];
  const lastRow = rows.at(-1);
  if (!firstRow || !lastRow) throw new Error("a cold-tier file without rows");
  return {
    objectKey: key,
    schemaVersion: SCHEMA_VERSION,
    rows: rows.length,
    bytes: body.length,
    sha256: digest,
    firstOccurredAt: firstRow.occurredAt,
    firstId: firstRow.id,
    lastOccurredAt: lastRow.occurredAt,
    lastId: lastRow.id,
    verifiedAt: nowIso(ctx.now()),
  };
}
