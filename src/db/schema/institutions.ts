import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { institutions, users } from "./identity";

/**
 * One live invitation per member: issuing a new one replaces the old. Only the SHA-256 of the token
 * is stored; `accepted_at` makes it single-use.
 */
export const invitations = sqliteTable(
  "invitations",
  {
    userId: text("user_id")
      .primaryKey()
      .references(() => users.id),
    institutionId: text("institution_id")
      .notNull()
      .references(() => institutions.id),
    tokenHash: text("token_hash").notNull(),
    expiresAt: text("expires_at").notNull(),
    acceptedAt: text("accepted_at"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [uniqueIndex("invitations_token_hash_idx").on(t.tokenHash)],
);

export const BULK_MODES = ["upsert", "sync"] as const;
export type BulkMode = (typeof BULK_MODES)[number];

export const BULK_STATUSES = ["queued", "processing", "completed", "failed"] as const;
export type BulkStatus = (typeof BULK_STATUSES)[number];

export const BULK_OUTCOMES = ["created", "updated", "unchanged", "rejected"] as const;
export type BulkOutcome = (typeof BULK_OUTCOMES)[number];

/**
 * Bulk member uploads. Small files are processed within the request; larger ones by the bulk queue
 * consumer chunk by chunk, `next_line` being the checkpoint (every data line before it is applied and
 * reported). At most one queued or processing job per institution (partial unique index).
 */
export const bulkJobs = sqliteTable(
  "bulk_jobs",
  {
    id: text("id").primaryKey(),
    institutionId: text("institution_id")
      .notNull()
      .references(() => institutions.id),
    uploadedBy: text("uploaded_by")
      .notNull()
      .references(() => users.id),
    /** The uploader's role when uploading: the ceiling for roles in the file. */
    uploaderRole: text("uploader_role").notNull(),
    mode: text("mode", { enum: BULK_MODES }).notNull(),
    dryRun: integer("dry_run", { mode: "boolean" }).notNull(),
    force: integer("force", { mode: "boolean" }).notNull().default(false),
    status: text("status", { enum: BULK_STATUSES }).notNull(),
    /** The file's header cells as uploaded, for rejected.csv. */
    header: text("header", { mode: "json" }).$type<string[]>().notNull().default([]),
    /** The uploaded file in R2 (queued jobs only). */
    r2Key: text("r2_key"),
    totalRows: integer("total_rows").notNull(),
    /** Checkpoint: the next data row index (0-based) to process. */
    nextRow: integer("next_row").notNull().default(0),
    created: integer("created").notNull().default(0),
    updated: integer("updated").notNull().default(0),
    unchanged: integer("unchanged").notNull().default(0),
    suspended: integer("suspended").notNull().default(0),
    rejected: integer("rejected").notNull().default(0),
    error: text("error"),
    /** Incremented at each hand-over to a continuation message; a message names the generation it continues. */
    generation: integer("generation").notNull().default(0),
    /**
     * The lease (src/platform/jobs/lease.ts): the invocation (or the request) applying the job, null
     * while the job awaits a queue message; and until when (ms since the epoch) the holder, or that
     * message's due time plus the grace, accounts for it. Past it, the minute sweep resumes the job.
     */
    leaseId: text("lease_id"),
    leaseUntil: integer("lease_until"),
    /** Invocations that claimed the job. */
    attempts: integer("attempts").notNull().default(0),
    /** ms since the epoch: the last sign of life (a claim, a chunk, a hand-over). */
    heartbeatAt: integer("heartbeat_at").notNull(),
    createdAt: text("created_at").notNull(),
    completedAt: text("completed_at"),
  },
  (t) => [
    index("bulk_jobs_institution_idx").on(t.institutionId, t.createdAt, t.id),
    uniqueIndex("bulk_jobs_one_active_idx")
      .on(t.institutionId)
      .where(sql`status in ('queued', 'processing')`),
  ],
);

/** One row of a bulk job's report per data row of the file. */
export const bulkJobRows = sqliteTable(
  "bulk_job_rows",
  {
    jobId: text("job_id")
      .notNull()
      .references(() => bulkJobs.id),
    /** 1-based line of the file where the row starts. */
    line: integer("line").notNull(),
    email: text("email"),
    externalId: text("external_id"),
    outcome: text("outcome", { enum: BULK_OUTCOMES }).notNull(),
    errors: text("errors", { mode: "json" }).$type<string[]>().notNull(),
    /** A rejected row's cells as uploaded, for rejected.csv; null for the others. */
    cells: text("cells", { mode: "json" }).$type<string[]>(),
    userId: text("user_id"),
    /**
     * A member this queued upload created, still to get its invitation: minted the first time the row
     * is read (shown once, valid 7 days from then), not while the upload runs.
     */
    invitationDue: integer("invitation_due", { mode: "boolean" }).notNull().default(false),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.line] })],
);
