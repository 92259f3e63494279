import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { SSO_TYPES } from "./institution-insights";

/**
 * SSO sign-in (src/domains/sso/, docs/design/sso-signin.md): the pending requests a sign-in starts,
 * the single-use codes it ends with, who each IdP subject is, and the sign-in log. The settings
 * themselves are `sso_connections` / `sso_domains`.
 */

/**
 * A sign-in sent to the IdP and not yet back: single use, ten minutes. `state` is what travels (the
 * OIDC `state`, the SAML `RelayState`); the rest stays here. Written by any protocol's "begin".
 */
export const ssoRequests = sqliteTable(
  "sso_requests",
  {
    state: text("state").primaryKey(),
    institutionId: text("institution_id").notNull(),
    protocol: text("protocol", { enum: SSO_TYPES }).notNull(),
    /** SHA-256 hex of the value of the browser's `sso_state_<state>` cookie set with it. */
    browserBindingHash: text("browser_binding_hash").notNull(),
    /** OIDC: the ID token's `nonce`. SAML: the AuthnRequest's ID (`InResponseTo`). */
    nonce: text("nonce").notNull(),
    /** OIDC: the PKCE code verifier (S256). Null for SAML. */
    codeVerifier: text("code_verifier"),
    /** ms */
    expiresAt: integer("expires_at").notNull(),
    /** ms; null until a callback takes it. */
    usedAt: integer("used_at"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("sso_requests_expires_idx").on(t.expiresAt)],
);

/** The single-use code of a finished sign-in (60 s), exchanged at `POST /api/auth/sso/session`. */
export const ssoSessionCodes = sqliteTable("sso_session_codes", {
  /** SHA-256 hex of the code; the code itself travels only in the URL fragment. */
  codeHash: text("code_hash").primaryKey(),
  userId: text("user_id").notNull(),
  institutionId: text("institution_id").notNull(),
  /** The sign-in log entry it ends. */
  signInId: text("sign_in_id").notNull(),
  /** ms */
  expiresAt: integer("expires_at").notNull(),
  usedAt: integer("used_at"),
});

/** Who an IdP subject is: (institution, subject) → member, written at the first SSO sign-in. */
export const ssoIdentities = sqliteTable(
  "sso_identities",
  {
    institutionId: text("institution_id").notNull(),
    /** The IdP's stable id of the person: the ID token's `sub`, SAML's NameID. */
    subject: text("subject").notNull(),
    userId: text("user_id").notNull(),
    protocol: text("protocol", { enum: SSO_TYPES }).notNull(),
    createdAt: text("created_at").notNull(),
    lastSignInAt: text("last_sign_in_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.institutionId, t.subject] }),
    index("sso_identities_user_idx").on(t.userId),
  ],
);

export const SSO_SIGN_IN_STATUSES = ["succeeded", "refused"] as const;
export type SsoSignInStatus = (typeof SSO_SIGN_IN_STATUSES)[number];

/** The SSO log: every sign-in through an institution's IdP, accepted or refused, and why. */
export const ssoSignIns = sqliteTable(
  "sso_sign_ins",
  {
    id: text("id").primaryKey(),
    institutionId: text("institution_id").notNull(),
    protocol: text("protocol", { enum: SSO_TYPES }).notNull(),
    status: text("status", { enum: SSO_SIGN_IN_STATUSES }).notNull(),
    /** A refusal's reason (SSO_REFUSAL_REASONS in src/domains/sso/refusal.ts); null when it succeeded. */
    reason: text("reason"),
    detail: text("detail"),
    subject: text("subject"),
    email: text("email"),
    userId: text("user_id"),
    /** Whether this sign-in created the member (just-in-time provisioning). */
    provisioned: integer("provisioned", { mode: "boolean" }).notNull().default(false),
    requestId: text("request_id"),
    createdAt: text("created_at").notNull().default(sql`(strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))`),
  },
  (t) => [index("sso_sign_ins_institution_idx").on(t.institutionId, t.createdAt, t.id)],
);

/**
 * The keys an institution signs its OIDC client assertions (`private_key_jwt`, RFC 7523) with, kept by
 * the platform's signing-key store (src/platform/crypto/signing-keys.ts): one current key per
 * algorithm, the private half sealed, the public half published at the institution's OIDC JWKS URL; a
 * rotated-out key stays published for 7 days.
 */
export const ssoSigningKeys = sqliteTable(
  "sso_signing_keys",
  {
    /** The JWK `kid` (its RFC 7638 thumbprint). */
    id: text("id").primaryKey(),
    institutionId: text("institution_id").notNull(),
    /** `'current'` (RS256) or `'current:ES256'` for a signing key; null once rotated out. */
    currentSlot: text("current_slot"),
    /** The public JWK as published. */
    publicJwk: text("public_jwk", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    /** AES-GCM sealed JWK of the private key; never returned, never logged. */
    privateKeySealed: text("private_key_sealed").notNull(),
    createdAt: text("created_at").notNull(),
    retiredAt: text("retired_at"),
    /** ISO time until which a retired key stays in the JWKS. */
    publishedUntil: text("published_until"),
  },
  (t) => [
    uniqueIndex("sso_signing_keys_current_idx").on(t.institutionId, t.currentSlot),
    index("sso_signing_keys_institution_idx").on(t.institutionId, t.createdAt),
  ],
);
