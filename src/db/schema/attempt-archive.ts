import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * The cold tier's manifest (src/domains/progress/cold-tier, docs/design/cold-tier.md): one row per
 * verified file of archived attempts in R2. A day of an institution is one or more parts; each part
 * holds the attempts of a contiguous range of the export order (occurred_at, id), up to and including
 * its last key, from the previous part's last key (or the day's start). A row is written only after its
 * file was read back and checked, and before any attempt in it is deleted from D1.
 */
export const attemptArchiveFiles = sqliteTable(
  "attempt_archive_files",
  {
    institutionId: text("institution_id").notNull(),
    /** The UTC day of the attempts' `occurred_at`, `YYYY-MM-DD`. */
    day: text("day").notNull(),
    /** 1, 2, … in key order within the day. */
    part: integer("part").notNull(),
    objectKey: text("object_key").notNull(),
    /** The file's row format (the `v1` of the key). */
    schemaVersion: integer("schema_version").notNull(),
    rows: integer("rows").notNull(),
    /** Size of the gzip object in R2. */
    bytes: integer("bytes").notNull(),
    /** Lower-case hex SHA-256 of the uncompressed NDJSON. */
    sha256: text("sha256").notNull(),
    firstOccurredAt: text("first_occurred_at").notNull(),
    firstId: text("first_id").notNull(),
    lastOccurredAt: text("last_occurred_at").notNull(),
    lastId: text("last_id").notNull(),
    verifiedAt: text("verified_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.institutionId, t.day, t.part] })],
);

/**
 * Who is moving a day of an institution to the cold tier: one mover at a time per day, so that two
 * overlapping cron runs never write the same file. Past `lease_until` (ms) the mover is presumed dead
 * and the day is free; every write to R2 renews the lease first.
 */
export const attemptArchiveClaims = sqliteTable(
  "attempt_archive_claims",
  {
    institutionId: text("institution_id").notNull(),
    day: text("day").notNull(),
    leaseId: text("lease_id").notNull(),
    leaseUntil: integer("lease_until").notNull(),
  },
  (t) => [primaryKey({ columns: [t.institutionId, t.day] })],
);

export type AttemptArchiveFile = typeof attemptArchiveFiles.$inferSelect;
