import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const PLANS = ["free", "pro", "enterprise"] as const;
export type Plan = (typeof PLANS)[number];

export const ROLES = ["platform_admin", "institution_admin", "instructor", "learner"] as const;
export type Role = (typeof ROLES)[number];

export const MEMBER_STATUSES = ["invited", "active", "suspended"] as const;
export type MemberStatus = (typeof MEMBER_STATUSES)[number];

/** White-label settings shown on the institution's dashboard; every field optional. */
export interface Branding {
  display_name?: string | null;
  logo_url?: string | null;
  primary_color?: string | null;
  accent_color?: string | null;
}

export const institutions = sqliteTable("institutions", {
  id: text("id").primaryKey(),
  /** The institution's number, allocated as a learner's (`users.number`), kept across a move. */
  number: integer("number").unique(),
  slug: text("slug").notNull().unique(),
  name: text("name").notNull(),
  plan: text("plan", { enum: PLANS }).notNull().default("free"),
  /** Enterprise contracts carry their own per-token limit; null means the plan's default. */
  rateLimitPerMinute: integer("rate_limit_per_minute"),
  /** Invited and active members allowed at once; null means unlimited. */
  seats: integer("seats"),
  branding: text("branding", { mode: "json" }).$type<Branding>().notNull().default({}),
  /** BCP 47 language tag. */
  locale: text("locale").notNull().default("en"),
  /** IANA time zone. */
  timeZone: text("time_zone").notNull().default("UTC"),
  createdAt: text("created_at").notNull().default(sql`(strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))`),
  /** Null on rows written before the column existed (a data migration fills them); readers fall back to created_at. */
  updatedAt: text("updated_at"),
});

export const users = sqliteTable(
  "users",
  {
    id: text("id").primaryKey(),
    /**
     * The learner's number (docs/design/capacity.md, "Integer keys"): what the rows kept for good
     * carry instead of the id. Allocated by a trigger in the statement that inserts the user, as
     * `sequence × 128 + the database's index` (`database_numbering`), so numbers of two databases
     * never collide and a moved user keeps theirs. Never null once written, never changed.
     */
    number: integer("number").unique(),
    /** Stored lower-cased so that look-ups and the unique constraint ignore case. */
    email: text("email").notNull().unique(),
    name: text("name").notNull(),
    role: text("role", { enum: ROLES }).notNull(),
    institutionId: text("institution_id").references(() => institutions.id),
    /** `pbkdf2-sha256$<iterations>$<salt b64>$<hash b64>`: parameters live beside the hash so they can be raised later. */
    passwordHash: text("password_hash").notNull(),
    timeZone: text("time_zone").notNull().default("UTC"),
    /** Shown anonymised on leaderboards. */
    leaderboardOptOut: integer("leaderboard_opt_out", { mode: "boolean" }).notNull().default(false),
    /** `invited` members have no usable password until they accept their invitation; `suspended` ones cannot sign in. */
    status: text("status", { enum: MEMBER_STATUSES }).notNull().default("active"),
    /** The customer's SIS/HR id, unique within the institution. */
    externalId: text("external_id"),
    createdAt: text("created_at").notNull().default(sql`(strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))`),
    /** Null on rows written before the column existed; readers fall back to created_at. */
    updatedAt: text("updated_at"),
    lastActiveAt: text("last_active_at"),
  },
  (t) => [
    index("users_institution_idx").on(t.institutionId, t.id),
    uniqueIndex("users_institution_external_id_idx").on(t.institutionId, t.externalId),
  ],
);

/** A member's groups (classes, departments): free-form names within the institution. */
export const memberGroups = sqliteTable(
  "member_groups",
  {
    institutionId: text("institution_id")
      .notNull()
      .references(() => institutions.id),
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    groupName: text("group_name").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.groupName] }),
    index("member_groups_institution_group_idx").on(t.institutionId, t.groupName, t.userId),
  ],
);
