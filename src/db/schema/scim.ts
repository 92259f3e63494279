import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { institutions, users } from "./identity";

/**
 * Bearer tokens an institution gives its identity provider (Okta, Microsoft Entra) for SCIM 2.0
 * provisioning at `/scim/v2`: the token decides the institution. Only the SHA-256 of the plain value
 * is stored; a revoked token answers 401 from its next request on.
 */
export const scimTokens = sqliteTable(
  "scim_tokens",
  {
    id: text("id").primaryKey(),
    institutionId: text("institution_id")
      .notNull()
      .references(() => institutions.id),
    /** What the administrator calls it ("Okta production"). */
    name: text("name").notNull(),
    /** Lower-case hex SHA-256 of the plain value. */
    tokenHash: text("token_hash").notNull().unique(),
    /** The first characters of the plain value, to recognise it in a list. */
    prefix: text("prefix").notNull(),
    createdBy: text("created_by").references(() => users.id),
    createdAt: text("created_at").notNull(),
    lastUsedAt: text("last_used_at"),
    revokedAt: text("revoked_at"),
  },
  (t) => [index("scim_tokens_institution_idx").on(t.institutionId, t.revokedAt, t.createdAt)],
);

/** An institution's SCIM settings; no row means the defaults. */
export const scimSettings = sqliteTable("scim_settings", {
  institutionId: text("institution_id")
    .primaryKey()
    .references(() => institutions.id),
  /** The enterprise extension's `department` becomes one of the member's groups. */
  departmentAsGroup: integer("department_as_group", { mode: "boolean" }).notNull().default(false),
  updatedAt: text("updated_at").notNull(),
});

/**
 * A SCIM Group: a stable id and display name for one of the institution's member groups (the
 * `member_groups` rows with `group_name = display_name` are its members).
 */
export const scimGroups = sqliteTable(
  "scim_groups",
  {
    id: text("id").primaryKey(),
    institutionId: text("institution_id")
      .notNull()
      .references(() => institutions.id),
    displayName: text("display_name").notNull(),
    externalId: text("external_id"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("scim_groups_institution_name_idx").on(t.institutionId, t.displayName),
    uniqueIndex("scim_groups_institution_external_id_idx").on(t.institutionId, t.externalId),
  ],
);

/**
 * The SCIM attributes of a member that the member row has no column for: the name's parts, the
 * e-mail addresses as the IdP sent them, the enterprise extension's department (and so which of the
 * member's groups came from it); after a SCIM DELETE, that this institution removed the user.
 */
export const scimUserAttributes = sqliteTable(
  "scim_user_attributes",
  {
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    institutionId: text("institution_id")
      .notNull()
      .references(() => institutions.id),
    givenName: text("given_name"),
    familyName: text("family_name"),
    /** `[{ value, type, primary }]` as sent; null: the member's e-mail as the one work address. */
    emails: text("emails", { mode: "json" }).$type<{ value: string; type?: string; primary?: boolean }[]>(),
    department: text("department"),
    /**
     * Set when the directory deleted the member (DELETE /Users): the row then only remembers that
     * this institution removed the user, so that its directory may provision the same person again.
     */
    removedAt: text("removed_at"),
  },
  (t) => [primaryKey({ columns: [t.userId, t.institutionId] })],
);
