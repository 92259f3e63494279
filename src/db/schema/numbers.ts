import { sql } from "drizzle-orm";
import { check, integer, sqliteTable } from "drizzle-orm/sqlite-core";

/**
 * This database's index and the sequence its learners' and institutions' numbers are allocated
 * from: `number = sequence × 128 + index` (docs/design/capacity.md, "Integer keys"). One row,
 * written by the migration runners before the migrations (scripts/database-index.mjs), never by a
 * migration: migrations are the same in every database, the index is not. Not copied by a move, so
 * a moved learner keeps a number of another residue, which this database never allocates.
 */
export const databaseNumbering = sqliteTable(
  "database_numbering",
  {
    /** Always 1: the table has one row. */
    id: integer("id").primaryKey(),
    /** The first database's index is 0, `DB_<n>`'s is n. */
    databaseIndex: integer("database_index").notNull(),
    /** The next sequence to allocate. */
    nextSequence: integer("next_sequence").notNull(),
  },
  (t) => [
    check("database_numbering_one_row", sql`${t.id} = 1`),
    check("database_numbering_index", sql`${t.databaseIndex} BETWEEN 0 AND 127`),
  ],
);
