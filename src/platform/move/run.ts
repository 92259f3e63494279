import { movedTables } from "../../db/institution-tables";
import { jsonArrays } from "../batch";
import { nowIso } from "../ids";
import type { ServiceContext } from "../service/context";
import { FIRST_DATABASE } from "../service/databases";
import { forgetPlacement, PLACEMENT_TTL_MS } from "../service/directory";
import { catalogueNumberingDiffers } from "./catalogue";
import { checkpoint, finish, type InstitutionMove, type MoveCursor } from "./jobs";
import {
  add,
  LAZY_CHECKPOINT_MS,
  lastKey,
  MAX_PASSES,
  MOVE_PAGE_ROWS,
  type MoveProgress,
  rowsPage,
  type Side,
  side,
  switchedAlready,
  writePage,
} from "./pages";
import { anyRow, DELETE_KEYS, deleteKeys, FREEZE } from "./sql";
import { abandon, afterSwitch, switchStep } from "./switch";

export type { MoveProgress } from "./pages";
export { abandon } from "./switch";

/**
 * An institution's move, step by step (design/multi-database.md#moving-an-institution-online):
 *
 * 1. `copying`: every table in the registry's order, keyset pages by primary key from the source,
 *    upserted into the target (a page done twice writes the same rows); the institution's directory
 *    keys written in `DB` when the target is not `DB`. Reads and writes go on in the source.
 * 2. `switching`: the directory row `moving` (writes answer 503), a wait of `PLACEMENT_TTL_MS` so
 *    that no isolate still writes with the old placement, then passes of: prune the target of rows
 *    the source no longer has, copy every row again (rows updated in place since their copy), verify
 *    every table key by key — until a pass verifies; then the row gets the target and epoch + 1, the
 *    institution's token gates are told, and writes resume in the target. Three passes that do not
 *    verify give up: writes resume in the source, which still has everything.
 * 3. `deleting`: the source's rows, children first, a page at a time; a row found there that the
 *    target lacks (written late by a queue consumer still running in the source) is copied first.
 *
 * Each page is a checkpoint: a crash resumes from the last one, and every step is idempotent.
 */

export async function runMove(
  ctx: ServiceContext,
  job: InstitutionMove,
  leaseId: string,
  deadline: number,
): Promise<"continue" | "done"> {
  const tables = movedTables();
  const source = side(ctx, job.source);
  const target = side(ctx, job.target);
  const institutionId = job.institutionId;
  const progress = job.progress as unknown as MoveProgress;
  // A checkpoint per page, but within the switch at most one a second: a table with nothing to do
  // is a few reads, and a write per table would lengthen the freeze. A step redone after a crash
  // writes nothing new (every step is idempotent).
  let savedAt = 0;
  let resumeChecked = false;
  const save = async (changes: Parameters<typeof checkpoint>[3]) => {
    const now = ctx.now();
    if (job.state === "switching" && !changes.state && now - savedAt < LAZY_CHECKPOINT_MS) {
      Object.assign(job, changes);
      return;
    }
    savedAt = now;
    await checkpoint(ctx, job, leaseId, {
      progress: progress as unknown as Record<string, unknown>,
      ...changes,
    });
  };

  for (;;) {
    // The switch runs to its end in one invocation: a hand-over would add the queue's latency to the
    // time writes are refused (its checkpoints renew the lease; a crash resumes it from the last one).
    if (job.state !== "switching" && ctx.now() > deadline) return "continue";
    const cursor = (job.cursor ?? { table: 0, after: null, pass: 0 }) as unknown as MoveCursor;
    const at = (next: MoveCursor) => next as unknown as Record<string, unknown>;

    if (job.state === "queued") {
      if (await refusedForCatalogue(ctx, job, leaseId, { source, target, undoCopy: false })) return "done";
      await save({ state: "copying", cursor: at({ table: 0, after: null, pass: 0 }) });
      continue;
    }

    if (job.state === "copying") {
      const table = tables[cursor.table];
      if (!table) {
        // Again before the freeze: a catalogue load may have run since the move began.
        if (await refusedForCatalogue(ctx, job, leaseId, { source, target, undoCopy: true })) return "done";
        const frozen = await ctx.home.d1
          .prepare(FREEZE)
          .bind(institutionId, job.source, nowIso(ctx.now()))
          .run();
        if ((frozen.meta.changes ?? 0) === 0) {
          await finish(ctx, job, leaseId, {
            state: "failed",
            error: `The directory no longer places the institution in ${job.source}; nothing was switched.`,
          });
          return "done";
        }
        forgetPlacement(institutionId);
        await save({
          state: "switching",
          frozenAt: ctx.now(),
          cursor: at({ table: tables.length - 1, after: null, pass: 0, step: "prune" }),
        });
        continue;
      }
      const rows = await rowsPage(source, table, institutionId, cursor.after);
      await writePage(ctx, target, table, rows, institutionId, "upsert");
      add(progress.copied, table.name, rows.length);
      const last = rows.at(-1);
      await save({
        cursor: at(
          rows.length < MOVE_PAGE_ROWS || !last
            ? { table: cursor.table + 1, after: null, pass: 0 }
            : { table: cursor.table, after: lastKey(table, last), pass: 0 },
        ),
      });
      continue;
    }

    if (job.state === "switching") {
      // Resumed after a crash that followed the switch itself: carry on from there.
      if (!resumeChecked) {
        resumeChecked = true;
        if (await switchedAlready(ctx, job)) {
          await afterSwitch(ctx, { job, tables, target, progress, save });
          continue;
        }
      }
      // No isolate writes with a placement read before the freeze once this has passed.
      const waited = ctx.now() - (job.frozenAt ?? ctx.now());
      if (waited < PLACEMENT_TTL_MS)
        await new Promise((resolve) => setTimeout(resolve, PLACEMENT_TTL_MS - waited));
      const outcome = await switchStep(ctx, { job, tables, source, target, cursor, progress, save });
      if (outcome === "failed") {
        await abandon(ctx, job);
        await finish(ctx, job, leaseId, {
          state: "failed",
          error: `The copy in ${job.target} did not match ${job.source} after ${MAX_PASSES} passes; the institution stays in ${job.source}.`,
        });
        return "done";
      }
      continue;
    }

    if (job.state === "deleting") {
      const table = tables[cursor.table];
      if (!table) {
        // A pass done: anything left (a trigger's rollup row, a straggler) takes another.
        let left = false;
        for (const each of tables)
          if (await source.d1.prepare(anyRow(each)).bind(institutionId).first()) left = true;
        if (left && cursor.pass + 1 < MAX_PASSES) {
          await save({ cursor: at({ table: tables.length - 1, after: null, pass: cursor.pass + 1 }) });
          continue;
        }
        if (target.name === FIRST_DATABASE) await ctx.home.d1.prepare(DELETE_KEYS).bind(institutionId).run();
        await finish(ctx, job, leaseId, { state: "completed" });
        return "done";
      }
      const rows = await rowsPage(source, table, institutionId, null);
      if (rows.length > 0) {
        // The first pass rescues stragglers; later ones only remove what the triggers wrote back.
        if (cursor.pass === 0) await writePage(ctx, target, table, rows, institutionId, "ignore");
        const keys = jsonArrays(rows.map((row) => lastKey(table, row)));
        await source.d1.batch(keys.map((json) => source.d1.prepare(deleteKeys(table)).bind(json)));
        add(progress.deleted, table.name, rows.length);
      }
      await save({
        cursor: at(
          rows.length < MOVE_PAGE_ROWS
            ? { table: cursor.table - 1, after: null, pass: cursor.pass }
            : { table: cursor.table, after: null, pass: cursor.pass },
        ),
      });
      continue;
    }
    return "done";
  }
}

/**
 * Fails the move, before anything is frozen, when the two databases number the catalogue differently
 * (./catalogue.ts): the moved progress would name other items. True: the move is finished (failed),
 * what it had copied deleted from the target (`undoCopy`).
 */
async function refusedForCatalogue(
  ctx: ServiceContext,
  job: InstitutionMove,
  leaseId: string,
  { source, target, undoCopy }: { source: Side; target: Side; undoCopy: boolean },
): Promise<boolean> {
  const difference = await catalogueNumberingDiffers(source, target);
  if (!difference) return false;
  if (undoCopy) await abandon(ctx, job);
  await finish(ctx, job, leaseId, {
    state: "failed",
    error: `The catalogue is numbered differently in ${job.source} and ${job.target} (${difference}); the institution's progress names catalogue rows by number, so it stays in ${job.source}. Load the catalogue into ${job.target} as in ${job.source}, then move again.`,
  });
  return true;
}
