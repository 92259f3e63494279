import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const PLANS = ["free", "pro", "enterprise"] as const;
export type Plan = (typeof PLANS)[number];

export const ROLES = ["platform_admin", "institution_admin", "instructor", "learner"] as const;
export type Role = (typeof ROLES)[number];

export const institutions = sqliteTable("institutions", {
  id: text("id").primaryKey(),
  slug: text("slug").notNull().unique(),
  name: text("name").notNull(),
  plan: text("plan", { enum: PLANS }).notNull().default("free"),
  /** Enterprise contracts carry their own per-token limit; null means the plan's default. */
  rateLimitPerMinute: integer("rate_limit_per_minute"),
  createdAt: text("created_at").notNull().default(sql`(strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))`),
});

export const users = sqliteTable(
  "users",
  {
    id: text("id").primaryKey(),
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
    createdAt: text("created_at").notNull().default(sql`(strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))`),
  },
  (t) => [index("users_institution_idx").on(t.institutionId, t.id)],
);
