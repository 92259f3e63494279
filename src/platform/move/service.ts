import { and, desc, eq } from "drizzle-orm";
import { institutionDatabases, institutionMoves, institutions } from "../../db/schema";
import { ApiError, validationError } from "../errors";
import { newId, nowIso } from "../ids";
import { awaitingMessage } from "../jobs/lease";
import { everyDatabase, type ServiceContext } from "../service/context";
import { databaseBindings, FIRST_DATABASE, isDatabaseBindingName } from "../service/databases";
import { enqueueMove, type InstitutionMove, isActive } from "./jobs";
import type { MoveProgress } from "./run";

function log(level: "info" | "warn", message: string, fields: Record<string, unknown>): void {
  console.error(JSON.stringify({ level, message, ...fields }));
}

/** Where the institution lives (its directory row, read now), or 404 when no database has it. */
async function placed(ctx: ServiceContext, institutionId: string) {
  const entry = await ctx.home.db
    .select({ binding: institutionDatabases.binding, state: institutionDatabases.state })
    .from(institutionDatabases)
    .where(eq(institutionDatabases.institutionId, institutionId))
    .get();
  const binding = entry && isDatabaseBindingName(entry.binding) ? entry.binding : FIRST_DATABASE;
  const there = everyDatabase(ctx).find((db) => db.name === binding);
  const row = await there?.db
    .select({ id: institutions.id })
    .from(institutions)
    .where(eq(institutions.id, institutionId))
    .get();
  if (!row) throw new ApiError("not_found", `No institution ${institutionId}.`);
  return { binding, state: entry?.state ?? "active" };
}

/**
 * Starts moving an institution to `target` (a database binding of this deployment): one conditional
 * INSERT (the partial unique index makes a second active move, even a concurrent one, conflict), then
 * the job's first message. When the send fails the move waits for the minute sweep.
 */
export async function startMove(
  ctx: ServiceContext,
  input: { institutionId: string; target: string; userId: string },
): Promise<InstitutionMove> {
  const { institutionId, target } = input;
  if (!isDatabaseBindingName(target) || !databaseBindings(ctx.env).includes(target))
    throw validationError([
      {
        path: "database",
        message: `must be one of this deployment's databases: ${databaseBindings(ctx.env).join(", ")}`,
      },
    ]);
  const placement = await placed(ctx, institutionId);
  const active = await activeMove(ctx, institutionId);
  if (active) throw inProgress(active);
  if (placement.binding === target)
    throw new ApiError("institution_already_there", `The institution already lives in ${target}.`);
  const now = ctx.now();
  const id = newId("mov");
  const progress: MoveProgress = { copied: {}, verified: {}, deleted: {} };
  const inserted = await ctx.home.db
    .insert(institutionMoves)
    .values({
      id,
      institutionId,
      source: placement.binding,
      target,
      state: "queued",
      progress: progress as unknown as Record<string, unknown>,
      ...awaitingMessage(now),
      heartbeatAt: now,
      createdBy: input.userId,
      createdAt: nowIso(now),
    })
    .onConflictDoNothing()
    .returning();
  const move = inserted[0];
  if (!move) {
    const other = await activeMove(ctx, institutionId);
    throw other ? inProgress(other) : new Error("the move was neither inserted nor found");
  }
  try {
    await enqueueMove(ctx, { move_id: id, generation: 0 });
  } catch (error) {
    log("warn", "institution move queued without its message; the sweep sends it", {
      move_id: id,
      error: String(error),
    });
  }
  return move;
}

function inProgress(move: InstitutionMove): ApiError {
  return new ApiError(
    "institution_move_in_progress",
    `The institution is already being moved to ${move.target} (move ${move.id}).`,
    { extensions: { move_id: move.id } },
  );
}

async function activeMove(ctx: ServiceContext, institutionId: string): Promise<InstitutionMove | null> {
  return (
    (await ctx.home.db
      .select()
      .from(institutionMoves)
      .where(and(eq(institutionMoves.institutionId, institutionId), isActive()))
      .get()) ?? null
  );
}

/** The institution's latest move and where it lives now; 404 for an institution no database has. */
export async function latestMove(
  ctx: ServiceContext,
  institutionId: string,
): Promise<{ database: string; move: InstitutionMove | null }> {
  const placement = await placed(ctx, institutionId);
  const move = await ctx.home.db
    .select()
    .from(institutionMoves)
    .where(eq(institutionMoves.institutionId, institutionId))
    .orderBy(desc(institutionMoves.createdAt), desc(institutionMoves.id))
    .limit(1)
    .get();
  return { database: placement.binding, move: move ?? null };
}
