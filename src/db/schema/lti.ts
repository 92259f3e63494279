import { sql } from "drizzle-orm";
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { institutions, users } from "./identity";

/**
 * A learning platform registered by an institution. Issuer + client id are unique per institution
 * only: two institutions may register the same pair (neither can tell), and a login is matched to
 * one of them by its deployment id (lti/login.ts); one that cannot be told apart is refused.
 */
export const ltiConsumers = sqliteTable(
  "lti_consumers",
  {
    id: text("id").primaryKey(),
    institutionId: text("institution_id")
      .notNull()
      .references(() => institutions.id),
    name: text("name").notNull(),
    issuer: text("issuer").notNull(),
    clientId: text("client_id").notNull(),
    deploymentIds: text("deployment_ids", { mode: "json" }).$type<string[]>().notNull(),
    authLoginUrl: text("auth_login_url").notNull(),
    authTokenUrl: text("auth_token_url").notNull(),
    jwksUrl: text("jwks_url").notNull(),
    authTokenAudience: text("auth_token_audience"),
    /**
     * The version of what the registration obtains platform access tokens with: raised (in the same
     * statement or batch) whenever its issuer, client id, token URL, audience, key set URL or signing
     * key changes, so the platform's token cache (`outbound_access_tokens`, holder `lti:<id>`) never
     * hands out a token obtained with what it said before.
     */
    credentialsVersion: integer("credentials_version").notNull().default(1),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("lti_consumers_institution_issuer_client_idx").on(t.institutionId, t.issuer, t.clientId),
    index("lti_consumers_issuer_client_idx").on(t.issuer, t.clientId),
    index("lti_consumers_institution_idx").on(t.institutionId, t.createdAt, t.id),
  ],
);

/**
 * The tool's RS256 signing keys, per registration: each registration signs its client assertions with
 * its own key, published at its own JWKS URL (`/api/lti/jwks/{consumer_id}`), so a platform that trusts
 * one registration's keys trusts no other's. One row per registration is current
 * (`current_slot = 'current'`, unique with the registration, so two isolates generating its first key
 * at once end with one); a key rotated out stays published until `published_until` so platforms that
 * cached it keep verifying. The keys go with their registration.
 */
export const ltiKeys = sqliteTable(
  "lti_keys",
  {
    /** The JWK `kid`. */
    id: text("id").primaryKey(),
    consumerId: text("consumer_id")
      .notNull()
      .references(() => ltiConsumers.id, { onDelete: "cascade" }),
    /** `'current'` for the signing key, null once rotated out. */
    currentSlot: text("current_slot"),
    /** The public JWK (kty, n, e, kid, alg, use) as published. */
    publicJwk: text("public_jwk", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    /** AES-GCM sealed PKCS#8 JWK of the private key; never returned, never logged. */
    privateKeySealed: text("private_key_sealed").notNull(),
    createdAt: text("created_at").notNull(),
    /** When it stopped being current; null while current. */
    retiredAt: text("retired_at"),
    /** ISO time until which a retired key stays in the JWKS. */
    publishedUntil: text("published_until"),
  },
  (t) => [
    uniqueIndex("lti_keys_consumer_current_idx").on(t.consumerId, t.currentSlot),
    index("lti_keys_consumer_idx").on(t.consumerId, t.createdAt),
  ],
);

/** OIDC login state: single use, 10 minutes; the server-side source of truth for the callback. */
export const ltiStates = sqliteTable("lti_states", {
  state: text("state").primaryKey(),
  nonce: text("nonce").notNull().unique(),
  consumerId: text("consumer_id")
    .notNull()
    .references(() => ltiConsumers.id, { onDelete: "cascade" }),
  /** The value of the state cookie set with it (compared when the browser sends the cookie back). */
  browserBinding: text("browser_binding").notNull(),
  targetLinkUri: text("target_link_uri").notNull(),
  /**
   * Whether the login came through the registration's own login URL (`/api/lti/login/{id}`) rather
   * than the shared one, where the registration was chosen by issuer, client id and deployment id.
   */
  registrationBound: integer("registration_bound", { mode: "boolean" }).notNull().default(false),
  /**
   * The login's `lti_storage_target` (LTI Client Side postMessage): the platform frame that keeps the
   * state and nonce for a browser that blocks third-party cookies. Null: the login offered no storage.
   */
  storageTarget: text("storage_target"),
  /**
   * The origin of the page that sent the login (its `Origin`, else `Referer`), which may frame the
   * launch's platform-storage pages besides the registration's own origins. Null when it sent neither.
   */
  loginOrigin: text("login_origin"),
  /** ms */
  expiresAt: integer("expires_at").notNull(),
  usedAt: integer("used_at"),
});

/** Which Lingua user an LTI `sub` of a registration is. */
export const ltiUserLinks = sqliteTable(
  "lti_user_links",
  {
    consumerId: text("consumer_id")
      .notNull()
      .references(() => ltiConsumers.id, { onDelete: "cascade" }),
    sub: text("sub").notNull(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.consumerId, t.sub] })],
);

export const LAUNCH_STATUSES = ["succeeded", "failed"] as const;
export type LaunchStatus = (typeof LAUNCH_STATUSES)[number];

/**
 * What an accepted launch was: an `LtiResourceLinkRequest` (a learner or instructor opening a link) or
 * an `LtiDeepLinkingRequest` (an instructor choosing content to link). Null on a refused launch.
 */
export const LAUNCH_KINDS = ["resource_link", "deep_linking"] as const;
export type LaunchKind = (typeof LAUNCH_KINDS)[number];

/**
 * The launch log: every callback, accepted or refused. A refused launch records only this row (with
 * its reason); `institution_id` is null when the refusal came before the registration was known.
 * `consumer_id` carries no foreign key so the log outlives a deleted registration.
 */
export const ltiLaunches = sqliteTable(
  "lti_launches",
  {
    id: text("id").primaryKey(),
    institutionId: text("institution_id"),
    consumerId: text("consumer_id"),
    status: text("status", { enum: LAUNCH_STATUSES }).notNull(),
    failureReason: text("failure_reason"),
    failureDetail: text("failure_detail"),
    deploymentId: text("deployment_id"),
    messageType: text("message_type"),
    sub: text("sub"),
    userId: text("user_id"),
    roles: text("roles", { mode: "json" }).$type<string[]>(),
    context: text("context", { mode: "json" }).$type<Record<string, unknown>>(),
    resourceLink: text("resource_link", { mode: "json" }).$type<Record<string, unknown>>(),
    custom: text("custom", { mode: "json" }).$type<Record<string, unknown>>(),
    targetLinkUri: text("target_link_uri"),
    targetType: text("target_type", { enum: ["course", "lesson"] }),
    targetId: text("target_id"),
    targetTitle: text("target_title"),
    /** The AGS endpoint claim as sent (`lineitem`, `lineitems`, `scope`). */
    ags: text("ags", { mode: "json" }).$type<Record<string, unknown>>(),
    /** The NRPS claim as sent. */
    nrps: text("nrps", { mode: "json" }).$type<Record<string, unknown>>(),
    /** Null on a refused launch. */
    kind: text("kind", { enum: LAUNCH_KINDS }),
    /** A deep-linking launch's `deep_linking_settings` claim as kept (return URL, accept_*, data, …). */
    deepLinking: text("deep_linking", { mode: "json" }).$type<Record<string, unknown>>(),
    /**
     * When a deep-linking launch's one response was built: set by a conditional update (only while
     * null), so two responses racing end with one.
     */
    deepLinkingRespondedAt: text("deep_linking_responded_at"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    index("lti_launches_institution_idx").on(t.institutionId, t.createdAt, t.id),
    index("lti_launches_target_idx")
      .on(t.userId, t.targetType, t.targetId)
      .where(sql`status = 'succeeded' AND ags IS NOT NULL`),
  ],
);

/** Single-use codes a browser exchanges for the launch's session (POST /api/lti/session). */
export const ltiSessionCodes = sqliteTable("lti_session_codes", {
  /** SHA-256 hex of the code; the code itself travels only in the URL fragment. */
  codeHash: text("code_hash").primaryKey(),
  launchId: text("launch_id").notNull(),
  /** ms */
  expiresAt: integer("expires_at").notNull(),
  usedAt: integer("used_at"),
});

export const PASSBACK_STATUSES = ["pending", "retrying", "succeeded", "failed"] as const;
export type PassbackStatus = (typeof PASSBACK_STATUSES)[number];

/** Scores sent (or being sent) to a platform's line item: manual ones and those of completion events. */
export const ltiPassbacks = sqliteTable(
  "lti_passbacks",
  {
    id: text("id").primaryKey(),
    launchId: text("launch_id")
      .notNull()
      .references(() => ltiLaunches.id, { onDelete: "cascade" }),
    institutionId: text("institution_id").notNull(),
    /** The outbox event of an automatic passback; null for a manual one. */
    eventId: text("event_id"),
    /**
     * The line item a manual grade names (`line_item_url`, one of the launch's context); null: the
     * launch's own `lineitem`.
     */
    lineItemUrl: text("line_item_url"),
    scoreGiven: real("score_given"),
    scoreMaximum: real("score_maximum"),
    /** Automatic passbacks: the score as a fraction of 1, scaled to the line item's maximum when sent. */
    scoreFraction: real("score_fraction"),
    activityProgress: text("activity_progress").notNull(),
    gradingProgress: text("grading_progress").notNull(),
    comment: text("comment"),
    /** The score's timestamp, fixed when the passback is made so that retries send the same score. */
    scoredAt: text("scored_at").notNull(),
    status: text("status", { enum: PASSBACK_STATUSES }).notNull(),
    attemptCount: integer("attempt_count").notNull().default(0),
    /** ms */
    nextAttemptAt: integer("next_attempt_at"),
    /** ms, while an attempt is in flight. */
    claimedUntil: integer("claimed_until"),
    platformStatus: integer("platform_status"),
    lastError: text("last_error"),
    /** The first KiB of the platform's last answer. */
    responseBody: text("response_body"),
    createdAt: text("created_at").notNull(),
    sentAt: text("sent_at"),
    completedAt: text("completed_at"),
  },
  (t) => [
    // One automatic passback per (launch, event), however often the event is delivered.
    uniqueIndex("lti_passbacks_launch_event_idx").on(t.launchId, t.eventId).where(sql`event_id IS NOT NULL`),
    index("lti_passbacks_launch_idx").on(t.launchId, t.createdAt, t.id),
    // The minute sweep's open passbacks.
    index("lti_passbacks_open_idx")
      .on(t.status, t.nextAttemptAt)
      .where(sql`status IN ('pending', 'retrying')`),
  ],
);

/**
 * Dynamic registration links (LTI Dynamic Registration 1.0): a single-use URL of
 * `GET /api/lti/register` an institution admin hands to an LMS administrator, bound to the
 * institution, valid 24 hours. Only the SHA-256 of the link's secret is stored. A registration
 * attempt takes the link for a short lease (`claimed_until`) so two attempts never run at once; a
 * failed attempt gives it back; a successful one spends it (`used_at`, `consumer_id`) in the same
 * D1 batch that stores the registration.
 */
export const ltiRegistrationLinks = sqliteTable(
  "lti_registration_links",
  {
    id: text("id").primaryKey(),
    institutionId: text("institution_id")
      .notNull()
      .references(() => institutions.id),
    /** SHA-256 hex of the link secret (the `link` query parameter); the secret itself is never stored. */
    secretHash: text("secret_hash").notNull().unique(),
    /** The user whose token created the link. */
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
    /** ms */
    expiresAt: integer("expires_at").notNull(),
    /** The attempt holding the link now (random), and until when (ms). */
    claimId: text("claim_id"),
    claimedUntil: integer("claimed_until"),
    /** ms: when a registration spent it. */
    usedAt: integer("used_at"),
    /** The registration it made; no foreign key, so the link's record outlives a deleted registration. */
    consumerId: text("consumer_id"),
  },
  (t) => [index("lti_registration_links_institution_idx").on(t.institutionId, t.createdAt)],
);

export const ROSTER_SYNC_STATUSES = ["queued", "processing", "completed", "failed"] as const;
export type RosterSyncStatus = (typeof ROSTER_SYNC_STATUSES)[number];

/**
 * Runs of `POST /api/integrations/lti-launches/{launch}/members/sync`: the roster's active members made
 * Lingua members. A run of 500 active members or fewer is done within its request and recorded
 * completed; a larger one is a leased job (platform/jobs/lease.ts) on `lingua-lti-roster`: `lease_id`
 * / `lease_until` say who accounts for it, `generation` fences a message the sweep replaced. One
 * active run per launch (the partial unique index): a second request while it runs answers it.
 */
export const ltiRosterSyncs = sqliteTable(
  "lti_roster_syncs",
  {
    id: text("id").primaryKey(),
    institutionId: text("institution_id").notNull(),
    launchId: text("launch_id")
      .notNull()
      .references(() => ltiLaunches.id, { onDelete: "cascade" }),
    status: text("status", { enum: ROSTER_SYNC_STATUSES }).notNull(),
    /** Active and inactive members of the roster; null until it was read. */
    activeCount: integer("active_count"),
    inactiveCount: integer("inactive_count"),
    createdCount: integer("created_count").notNull().default(0),
    alreadyLinkedCount: integer("already_linked_count").notNull().default(0),
    seatsExhaustedCount: integer("seats_exhausted_count").notNull().default(0),
    error: text("error"),
    generation: integer("generation").notNull().default(0),
    leaseId: text("lease_id"),
    /** ms */
    leaseUntil: integer("lease_until"),
    /** ms: the last time a holder or the sweep touched it. */
    heartbeatAt: integer("heartbeat_at"),
    createdAt: text("created_at").notNull(),
    completedAt: text("completed_at"),
  },
  (t) => [
    uniqueIndex("lti_roster_syncs_active_idx").on(t.launchId).where(sql`status IN ('queued', 'processing')`),
    index("lti_roster_syncs_launch_idx").on(t.launchId, t.createdAt, t.id),
    index("lti_roster_syncs_lease_idx").on(t.leaseUntil).where(sql`status IN ('queued', 'processing')`),
  ],
);
