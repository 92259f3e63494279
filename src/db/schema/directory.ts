import { sql } from "drizzle-orm";
import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * Which D1 database each institution lives in (docs/design/multi-database.md). Read and written in
 * the first database (`DB`) only; the table exists in every database because every database has the
 * same migrations. An institution without a row lives in `DB`, so institutions created before the
 * directory need no row.
 */
export const institutionDatabases = sqliteTable("institution_databases", {
  institutionId: text("institution_id").primaryKey(),
  /** The binding's name, as wrangler.toml's `[[d1_databases]]` names it. */
  binding: text("binding").notNull(),
  /** Bumped by every switch of a move, so that a cached placement older than it is known stale. */
  epoch: integer("epoch").notNull().default(0),
  /** `moving` while a move switches it over: its writes wait (design/multi-database.md#moving). */
  state: text("state", { enum: ["active", "moving"] })
    .notNull()
    .default("active"),
  updatedAt: text("updated_at").notNull(),
});

/**
 * Keys that find an institution before anything else says which one (an API token's hash, an
 * e-mail), for the institutions that do not live in `DB`: looked up only when the key is not found in
 * `DB` itself. Written in `DB` before the row it points to is written in the institution's database
 * (the primary key claims the key across every database), removed after it. A key whose row was never
 * written (a crash in between) leads to nothing: the institution's database has no such row.
 */
export const directoryKeys = sqliteTable(
  "directory_keys",
  {
    kind: text("kind", {
      // Plain text in SQL: a new kind needs no migration (design/multi-database.md#entry-points).
      // `slug`: an institution's slug, unique across every database (placement.ts).
      enum: [
        "token",
        "email",
        "slug",
        "scim_token",
        "stripe_customer",
        "sso_domain",
        "lti_client",
        "lti_registration",
      ],
    }).notNull(),
    key: text("key").notNull(),
    institutionId: text("institution_id").notNull(),
    /** When the key was last claimed: the orphan-key sweep leaves younger keys alone (a write in flight). */
    createdAt: text("created_at").notNull().default(sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`),
  },
  (t) => [primaryKey({ columns: [t.kind, t.key] })],
);

/**
 * Where a sweep that walks a large table in bounded pages stopped (the orphan-key sweep walks
 * `directory_keys` by primary key: platform/service/orphan-keys.ts). In `DB`.
 */
export const sweepCursors = sqliteTable("sweep_cursors", {
  name: text("name").primaryKey(),
  /** The sweep's own position, as JSON; an empty array starts from the beginning. */
  position: text("position").notNull(),
  updatedAt: text("updated_at").notNull(),
});
