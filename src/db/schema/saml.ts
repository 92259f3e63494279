import { index, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * SAML assertion IDs already accepted, per institution, each kept until its assertion would no longer
 * be accepted anyway (its NotOnOrAfter plus the clock skew): a second POST of the same assertion is a
 * replay. The insert that accepts an assertion is the check (primary key, ON CONFLICT DO NOTHING), so
 * two concurrent posts of one assertion sign in once. See docs/design/saml.md.
 */
export const samlAssertionReplays = sqliteTable(
  "saml_assertion_replays",
  {
    institutionId: text("institution_id").notNull(),
    assertionId: text("assertion_id").notNull(),
    expiresAt: text("expires_at").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.institutionId, t.assertionId] }),
    index("saml_assertion_replays_expiry_idx").on(t.institutionId, t.expiresAt),
  ],
);
