import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { institutions, users } from "./identity";

export const TOKEN_KINDS = ["session", "api"] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

export const apiTokens = sqliteTable(
  "api_tokens",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    /** Null only for platform admins, who belong to no institution. */
    institutionId: text("institution_id").references(() => institutions.id),
    kind: text("kind", { enum: TOKEN_KINDS }).notNull(),
    name: text("name").notNull(),
    /** Lower-case hex SHA-256 of the plain value; the plain value is never stored. */
    tokenHash: text("token_hash").notNull().unique(),
    /** The first characters of the plain value, enough to recognise a token in a list and nothing more. */
    prefix: text("prefix").notNull(),
    /** JSON array of ability names, possibly `["*"]`. */
    abilities: text("abilities", { mode: "json" }).$type<string[]>().notNull(),
    createdAt: text("created_at").notNull(),
    lastUsedAt: text("last_used_at"),
    expiresAt: text("expires_at"),
    revokedAt: text("revoked_at"),
  },
  (t) => [
    index("api_tokens_institution_idx").on(t.institutionId, t.revokedAt, t.createdAt),
    index("api_tokens_user_idx").on(t.userId, t.revokedAt, t.createdAt),
  ],
);

export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    /** Scoped by the caller so that two integrators can never collide on a key. */
    scope: text("scope").notNull(),
    key: text("key").notNull(),
    method: text("method").notNull(),
    path: text("path").notNull(),
    requestHash: text("request_hash").notNull(),
    /** Null while the first request is still in flight. */
    responseStatus: integer("response_status"),
    /** AES-GCM sealed JSON of the response headers and body: a replay may carry a secret shown once. */
    responseSealed: text("response_sealed"),
    lockedUntil: integer("locked_until").notNull(),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.scope, t.key] }), index("idempotency_keys_expiry_idx").on(t.expiresAt)],
);
