import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * OAuth 2 access tokens that Lingua obtained from a customer's authorisation server (an LRS's token
 * URL; LTI platforms next), cached across isolates until shortly before they expire
 * (platform/outbound/access-tokens.ts). `holder` names the row that holds the credentials (e.g.
 * `xapi:<endpoint id>`), `version` its credentials' version: a token of older credentials is never
 * used. The token is sealed, bound to holder, scope and version.
 */
export const outboundAccessTokens = sqliteTable(
  "outbound_access_tokens",
  {
    holder: text("holder").notNull(),
    /** The scope asked for ("" when none). */
    scope: text("scope").notNull(),
    version: integer("version").notNull(),
    tokenSealed: text("token_sealed").notNull(),
    /** ms: when the cached token stops being used (its expiry less a margin). */
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.holder, t.scope] })],
);
