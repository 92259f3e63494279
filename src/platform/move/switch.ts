// The switch of a move (./run.ts says the steps): prune, copy again, verify, then the directory's
// switch; and undoing a move given up before it.
import { movedTables } from "../../db/institution-tables";
import { invalidatePrincipals } from "../auth/invalidate";
import { nowIso } from "../ids";
import type { ServiceContext } from "../service/context";
import { FIRST_DATABASE } from "../service/databases";
import { forgetPlacement } from "../service/directory";
import type { checkpoint, InstitutionMove, MoveCursor } from "./jobs";
import {
  keysPage,
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
import { DELETE_KEYS, deleteKeys, keysPresent, type MovedTable, SWITCH, THAW } from "./sql";

export interface SwitchInput {
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
export async function switchStep(ctx: ServiceContext, input: SwitchInput): Promise<"next" | "failed"> {
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
export async function afterSwitch(
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
export async function pruneTable(source: Side, target: Side, table: MovedTable, institutionId: string) {
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
