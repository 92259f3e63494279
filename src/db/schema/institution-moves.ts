import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/**
 * Moves of an institution from one D1 database to another (docs/design/multi-database.md#moving-an-institution-online),
 * a job on the job leases (platform/jobs/lease.ts) driven through the `lingua-institution-moves`
 * queue. Read and written in `DB` only, beside the directory it switches.
 */
export const INSTITUTION_MOVE_STATES = [
  "queued",
  "copying",
  "switching",
  "deleting",
  "completed",
  "failed",
] as const;
export type InstitutionMoveState = (typeof INSTITUTION_MOVE_STATES)[number];

export const institutionMoves = sqliteTable(
  "institution_moves",
  {
    id: text("id").primaryKey(),
    institutionId: text("institution_id").notNull(),
    source: text("source").notNull(),
    target: text("target").notNull(),
    state: text("state", { enum: INSTITUTION_MOVE_STATES }).notNull(),
    /** Where the step is: the table's index in the registry and the last primary key done (opaque to all but the job). */
    cursor: text("cursor", { mode: "json" }).$type<Record<string, unknown>>(),
    /** Rows copied, verified and deleted so far, by table. */
    progress: text("progress", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    /** When its writes stopped (the directory row `moving`), and when they resumed on the target (ms since the epoch). */
    frozenAt: integer("frozen_at"),
    switchedAt: integer("switched_at"),
    generation: integer("generation").notNull().default(0),
    leaseId: text("lease_id"),
    leaseUntil: integer("lease_until"),
    heartbeatAt: integer("heartbeat_at").notNull(),
    error: text("error"),
    createdBy: text("created_by"),
    createdAt: text("created_at").notNull(),
    completedAt: text("completed_at"),
  },
  (t) => [
    index("institution_moves_institution_idx").on(t.institutionId, t.createdAt),
    /** One move at a time per institution: the insert of a second active one conflicts. */
    uniqueIndex("institution_moves_one_active_idx")
      .on(t.institutionId)
      .where(sql`state IN ('queued', 'copying', 'switching', 'deleting')`),
  ],
);
