import { movedTables } from "../../db/institution-tables";
import { invalidatePrincipals } from "../auth/invalidate";
import { jsonArrays } from "../batch";
import { nowIso } from "../ids";
import { everyDatabase, type ServiceContext } from "../service/context";
import { type DatabaseBinding, FIRST_DATABASE } from "../service/databases";
import { forgetPlacement, PLACEMENT_TTL_MS } from "../service/directory";
import { catalogueNumberingDiffers } from "./catalogue";
import { checkpoint, finish, type InstitutionMove, type MoveCursor } from "./jobs";
import {
  anyRow,
  DELETE_KEYS,
  deleteKeys,
  FREEZE,
  keysPresent,
  type MovedTable,
  PLACEMENT,
  pageOfKeys,
  pageOfRows,
  SWITCH,
  THAW,
  WRITE_KEYS,
  writeKeys,
  writeRows,
} from "./sql";

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

/** Rows per page: read at once from one database, written as one or a few JSON arrays to the other. */
export const MOVE_PAGE_ROWS = 500;
/** Within the switch, how often a checkpoint is written (the steps in between are redone after a crash). */
const LAZY_CHECKPOINT_MS = 1_000;
/** Passes of the switch (and of the deletion) before the move gives up. */
const MAX_PASSES = 3;

interface Side {
  name: DatabaseBinding;
  d1: D1Database;
}

export interface MoveProgress {
  copied: Record<string, number>;
  verified: Record<string, number>;
  deleted: Record<string, number>;
  /** How long the institution's writes were refused, once it switched (ms). */
  freezeMs?: number;
}

function side(ctx: ServiceContext, name: string): Side {
  const found = everyDatabase(ctx).find((db) => db.name === name);
  if (!found) throw new Error(`no D1 database bound as ${name}`);
  return { name: found.name, d1: found.d1 };
}

const add = (counts: Record<string, number>, table: string, n: number) => {
  counts[table] = (counts[table] ?? 0) + n;
};

async function rowsPage(from: Side, table: MovedTable, institutionId: string, after: unknown[] | null) {
  const { sql, params } = pageOfRows(table, after, MOVE_PAGE_ROWS);
  const { results } = await from.d1
    .prepare(sql)
    .bind(institutionId, ...params)
    .all<Record<string, unknown>>();
  return results;
}

async function keysPage(from: Side, table: MovedTable, institutionId: string, after: unknown[] | null) {
  const { sql, params } = pageOfKeys(table, after, MOVE_PAGE_ROWS);
  const { results } = await from.d1
    .prepare(sql)
    .bind(institutionId, ...params)
    .all<{ k: string }>();
  return results.map((row) => row.k);
}

const lastKey = (table: MovedTable, row: Record<string, unknown>) => table.primaryKey.map((c) => row[c]);

/** Writes rows into `to` (and, for tokens and members moved away from `DB`, their directory keys). */
async function writePage(
  ctx: ServiceContext,
  to: Side,
  table: MovedTable,
  rows: Record<string, unknown>[],
  institutionId: string,
  mode: "upsert" | "ignore",
): Promise<void> {
  if (rows.length === 0) return;
  const keys = WRITE_KEYS[table.name] ?? [];
  if (keys.length > 0 && to.name !== FIRST_DATABASE) {
    // The keys before the rows, as every writer of a key does.
    await ctx.home.d1.batch(
      keys.flatMap((key) =>
        jsonArrays(rows.map((row) => Object.fromEntries(key.columns.map((c) => [c, row[c]])))).map((json) =>
          ctx.home.d1.prepare(writeKeys(key)).bind(json, institutionId),
        ),
      ),
    );
  }
  const sql = writeRows(table, mode);
  await to.d1.batch(jsonArrays(rows).map((json) => to.d1.prepare(sql).bind(json)));
}

/**
 * Whether the directory already places the institution in the move's target: the switch happened
 * (its invocation may have died before recording it). From then on nothing may prune, verify or
 * abandon the target, where the institution's writes go.
 */
async function switchedAlready(ctx: ServiceContext, job: InstitutionMove): Promise<boolean> {
  const row = await ctx.home.d1
    .prepare(PLACEMENT)
    .bind(job.institutionId)
    .first<{ binding: string; state: string }>();
  return row?.binding === job.target && row.state === "active";
}

/** Works on the held move until it is done or `deadline` passes ("continue": the next message goes on). */
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

interface SwitchInput {
  job: InstitutionMove;
  tables: ReturnType<typeof movedTables>;
  source: Side;
  target: Side;
  cursor: MoveCursor;
  progress: MoveProgress;
  save: (changes: Parameters<typeof checkpoint>[3]) => Promise<void>;
}

/**
 * One page of the switch: prune (the target's rows the source no longer has, children first), copy
 * (every row again, parents first), verify (both sides' keys, page by page); at the end of a pass that
 * verified, the directory's switch. "failed": the last pass did not verify.
 */
async function switchStep(ctx: ServiceContext, input: SwitchInput): Promise<"next" | "failed"> {
  const { job, tables, source, target, cursor, progress, save } = input;
  const institutionId = job.institutionId;
  const at = (next: MoveCursor) => next as unknown as Record<string, unknown>;
  const step = cursor.step ?? "prune";

  if (step === "prune") {
    // Children first: the cursor walks down the copy order.
    const table = tables[cursor.table] as MovedTable;
    await pruneTable(source, target, table, institutionId);
    await save({
      cursor: at(
        cursor.table > 0
          ? { ...cursor, table: cursor.table - 1 }
          : { table: 0, after: null, pass: cursor.pass, step: "copy" },
      ),
    });
    return "next";
  }

  if (step === "copy") {
    const table = tables[cursor.table];
    if (!table) {
      await save({ cursor: at({ table: 0, after: null, pass: cursor.pass, step: "verify" }) });
      return "next";
    }
    const rows = await rowsPage(source, table, institutionId, cursor.after);
    await writePage(ctx, target, table, rows, institutionId, "upsert");
    const last = rows.at(-1);
    await save({
      cursor: at({
        ...cursor,
        ...(rows.length < MOVE_PAGE_ROWS || !last
          ? { table: cursor.table + 1, after: null }
          : { after: lastKey(table, last) }),
      }),
    });
    return "next";
  }

  // Verify: the same keys on both sides, page by page.
  const table = tables[cursor.table];
  if (table) {
    let after: unknown[] | null = null;
    let count = 0;
    for (;;) {
      const [mine, theirs] = await Promise.all([
        keysPage(source, table, institutionId, after),
        keysPage(target, table, institutionId, after),
      ]);
      if (JSON.stringify(mine) !== JSON.stringify(theirs)) {
        if (cursor.pass + 1 >= MAX_PASSES) return "failed";
        await save({
          cursor: at({ table: tables.length - 1, after: null, pass: cursor.pass + 1, step: "prune" }),
        });
        return "next";
      }
      count += mine.length;
      if (mine.length < MOVE_PAGE_ROWS) break;
      after = JSON.parse(mine.at(-1) as string) as unknown[];
    }
    progress.verified[table.name] = count;
    await save({ cursor: at({ ...cursor, table: cursor.table + 1 }) });
    return "next";
  }

  // Verified: the directory points at the target, and writes resume there.
  const switched = await ctx.home.d1.prepare(SWITCH).bind(institutionId, job.target, nowIso(ctx.now())).run();
  if ((switched.meta.changes ?? 0) === 0 && !(await switchedAlready(ctx, job))) return "failed";
  await afterSwitch(ctx, { job, tables, target, progress, save });
  return "next";
}

/** After the directory's switch: this isolate's placement dropped, the token gates told, on to deleting. */
async function afterSwitch(
  ctx: ServiceContext,
  input: Pick<SwitchInput, "job" | "tables" | "target" | "progress" | "save">,
): Promise<void> {
  const { job, tables, target, progress, save } = input;
  forgetPlacement(job.institutionId);
  const switchedAt = ctx.now();
  progress.freezeMs = switchedAt - (job.frozenAt ?? switchedAt);
  // Gates holding a principal with the old database re-read it where it lives now.
  await invalidatePrincipals({ env: ctx.env, database: target.name }, { institutionId: job.institutionId });
  await save({
    state: "deleting",
    switchedAt,
    cursor: { table: tables.length - 1, after: null, pass: 0 } as unknown as Record<string, unknown>,
  });
}

/**
 * Undoes a move that failed before its switch: writes resume in the source (which has everything),
 * and the target's partial copy is deleted, children first, so that nothing there (a member's address
 * found by sign-in, a token) is taken for the institution's. A move that switched is not undone: the
 * institution lives in the target.
 */
export async function abandon(ctx: ServiceContext, job: InstitutionMove): Promise<void> {
  if (job.state === "deleting" || job.state === "completed" || (await switchedAlready(ctx, job))) return;
  const source = side(ctx, job.source);
  const target = side(ctx, job.target);
  if (job.state === "switching") {
    await ctx.home.d1.prepare(THAW).bind(job.institutionId, nowIso(ctx.now())).run();
    forgetPlacement(job.institutionId);
  }
  const tables = movedTables();
  // Twice: deleting members makes the rollup triggers write rollup rows again.
  for (let pass = 0; pass < 2; pass++)
    for (const table of [...tables].reverse()) {
      for (;;) {
        const keys = await keysPage(target, table, job.institutionId, null);
        if (keys.length === 0) break;
        await target.d1
          .prepare(deleteKeys(table))
          .bind(`[${keys.join(",")}]`)
          .run();
        if (keys.length < MOVE_PAGE_ROWS) break;
      }
    }
  // The directory keys the copy wrote in DB for a target elsewhere lead to the source's rows again.
  if (target.name !== FIRST_DATABASE && source.name === FIRST_DATABASE)
    await ctx.home.d1.prepare(DELETE_KEYS).bind(job.institutionId).run();
}

/** Deletes from the target every row of the table the source does not have (removed since its copy). */
async function pruneTable(source: Side, target: Side, table: MovedTable, institutionId: string) {
  let after: unknown[] | null = null;
  for (;;) {
    const keys = await keysPage(target, table, institutionId, after);
    if (keys.length === 0) return;
    const json = `[${keys.join(",")}]`;
    const { results } = await source.d1.prepare(keysPresent(table)).bind(json).all<{ k: string }>();
    const present = new Set(results.map((row) => row.k));
    const gone = keys.filter((key) => !present.has(key));
    if (gone.length > 0)
      await target.d1
        .prepare(deleteKeys(table))
        .bind(`[${gone.join(",")}]`)
        .run();
    if (keys.length < MOVE_PAGE_ROWS) return;
    after = JSON.parse(keys.at(-1) as string) as unknown[];
  }
}
