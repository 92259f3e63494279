import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { institutions, users } from "./identity";
import { OUTBOUND_ERROR_CODES } from "./outbound-codes";
import { DELIVERY_STATUSES } from "./webhooks";

/** The xAPI versions an endpoint may speak (the `X-Experience-API-Version` header sent). */
export const XAPI_VERSIONS = ["1.0.3", "2.0.0"] as const;
export type XapiVersion = (typeof XAPI_VERSIONS)[number];

/** What an endpoint may forward, one verb each (docs/xapi.md). */
export const XAPI_ACTIVITIES = ["answered", "completed", "progressed", "mastered", "earned"] as const;
export type XapiActivity = (typeof XAPI_ACTIVITIES)[number];

export const XAPI_AUTH_TYPES = ["basic", "oauth2"] as const;
export type XapiAuthType = (typeof XAPI_AUTH_TYPES)[number];

/** How the actor is identified: an opaque account (default) or the member's e-mail, when opted in. */
export const XAPI_ACTOR_FORMATS = ["account", "mbox"] as const;
export type XapiActorFormat = (typeof XAPI_ACTOR_FORMATS)[number];

/** A statement's life: waiting to be sent, accepted by the LRS (200 or 409), or given up. */
export const XAPI_STATEMENT_STATUSES = ["pending", "sent", "failed"] as const;
export type XapiStatementStatus = (typeof XAPI_STATEMENT_STATUSES)[number];

/**
 * What every statement of a batch shares while they share it (`xapi_batches.log_status`): all still
 * pending, or all sent. A failure, or statements whose outcomes differ, puts each statement's own
 * state on its row and the batch's to null.
 */
export const XAPI_BATCH_LOG_STATUSES = ["pending", "sent"] as const;

/** An institution's Learning Record Store. */
export const xapiEndpoints = sqliteTable(
  "xapi_endpoints",
  {
    id: text("id").primaryKey(),
    institutionId: text("institution_id")
      .notNull()
      .references(() => institutions.id),
    name: text("name").notNull(),
    /** The LRS's xAPI base URL, normalised to end with `/`. */
    endpoint: text("endpoint").notNull(),
    version: text("version", { enum: XAPI_VERSIONS }).notNull(),
    authType: text("auth_type", { enum: XAPI_AUTH_TYPES }).notNull(),
    /** Basic: the user name. */
    username: text("username"),
    /** OAuth 2 client credentials: where the token comes from, whose it is, and for what. */
    tokenUrl: text("token_url"),
    clientId: text("client_id"),
    scope: text("scope"),
    /** AES-GCM sealed (ENCRYPTION_KEY): the Basic password or the OAuth 2 client secret. */
    secretSealed: text("secret_sealed").notNull(),
    /** Raised whenever the credentials change: a cached access token of an older version is not used. */
    credentialsVersion: integer("credentials_version").notNull().default(1),
    /** JSON array of XAPI_ACTIVITIES. */
    activities: text("activities", { mode: "json" }).$type<XapiActivity[]>().notNull(),
    actorFormat: text("actor_format", { enum: XAPI_ACTOR_FORMATS }).notNull().default("account"),
    enabled: integer("enabled", { mode: "boolean" }).notNull(),
    lastSuccessAt: text("last_success_at"),
    lastErrorAt: text("last_error_at"),
    lastError: text("last_error"),
    /** The first failed request since the last success; null while healthy. */
    failingSince: text("failing_since"),
    /** When `xapi_endpoint.failing` was emitted for the current failing run. */
    failingNotifiedAt: text("failing_notified_at"),
    createdBy: text("created_by").references(() => users.id),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("xapi_endpoints_institution_idx").on(t.institutionId, t.createdAt, t.id)],
);

/**
 * The delivery engine's work (platform/delivery): up to 50 statements of one endpoint sent in one
 * `POST {endpoint}/statements`. A batch is claimed, attempted and retried as one; it holds its
 * statements' log (`entries`) and, while they share it, their state; otherwise each statement's row
 * holds its own.
 */
export const xapiBatches = sqliteTable(
  "xapi_batches",
  {
    id: text("id").primaryKey(),
    endpointId: text("endpoint_id")
      .notNull()
      .references(() => xapiEndpoints.id, { onDelete: "cascade" }),
    status: text("status", { enum: DELIVERY_STATUSES }).notNull(),
    attemptCount: integer("attempt_count").notNull().default(0),
    /** Not before this time (ms). */
    nextAttemptAt: integer("next_attempt_at"),
    /** While an attempt is in flight (ms). */
    claimedUntil: integer("claimed_until"),
    lastResponseStatus: integer("last_response_status"),
    lastError: text("last_error"),
    lastErrorCode: text("last_error_code", { enum: OUTBOUND_ERROR_CODES }),
    /**
     * The facts of the batch's statements (statements/facts.ts `StoredFact`: an attempt by its id,
     * the other facts whole), one JSON array, while the batch is open; cleared when it finishes. A
     * statement is sent as built from its fact: the first attempt from the statements in hand, every
     * later one (a retry, a lapsed claim, the queue) rebuilt from these, to the same ids. Each
     * statement row says whether it is still to be sent: an attempt sends the batch's pending ones.
     */
    facts: text("facts"),
    /**
     * The statements as built, one JSON array: only batches made before `facts` existed
     * carry them, until they finish; an attempt of such a batch sends these.
     */
    bodies: text("bodies"),
    /**
     * The forwarding log's entries of the statements stored in this batch (a JSON array, in the order
     * they happened, each `[id, verb, activity IRI, user id, occurred_at]`): a statement has no row of
     * its own while it shares its batch's state. An id is named by one batch only (its key's).
     */
    entries: text("entries").notNull().default("[]"),
    statementCount: integer("statement_count").notNull().default(0),
    /**
     * The forwarding log of all its statements at once while they share it (XAPI_BATCH_LOG_STATUSES:
     * their rows' `status` is null): their status, requests that carried each, and last error; sent
     * at `completed_at`. Null: each statement's row holds its own (a failure, or outcomes that
     * differed).
     */
    logStatus: text("log_status", { enum: XAPI_BATCH_LOG_STATUSES }),
    logAttempts: integer("log_attempts").notNull().default(0),
    logError: text("log_error"),
    createdAt: text("created_at").notNull(),
    completedAt: text("completed_at"),
  },
  (t) => [
    /** The forwarding log's order (newest first, then by batch) and the purge's walk. */
    index("xapi_batches_endpoint_idx").on(t.endpointId, t.createdAt, t.id),
    /** The health counts of the statements that share their batch's log. */
    index("xapi_batches_log_idx")
      .on(t.endpointId, t.logStatus, t.completedAt)
      .where(sql`log_status IS NOT NULL`),
    index("xapi_batches_open_idx")
      .on(t.status, t.nextAttemptAt)
      .where(sql`status IN ('pending', 'retrying')`),
  ],
);

/**
 * The statement ids stored per endpoint, one entry each (`WITHOUT ROWID`, hand-written in its
 * migration, `…_xapi_packed_log`: drizzle does not model it): the id is derived from the endpoint and
 * the learning fact (statements/ids.ts), so the same fact is the same statement however often it is
 * offered (an event handed over twice, a back-fill), and the primary key keeps it once. `batch_id`:
 * the batch that stored it, whose `entries` name it. Kept as long as the statement's log (90 days).
 */
export const xapiStatementKeys = sqliteTable("xapi_statement_keys", {
  id: text("id").primaryKey(),
  batchId: text("batch_id").notNull(),
});

/**
 * A statement with a state of its own (the forwarding log's exceptions): every statement of a batch
 * whose statements no longer share its state (`xapi_batches.log_status` null: a failure, or outcomes
 * that differed), made from the batch's `entries` when it stopped sharing. A statement of a sharing
 * batch has no row here: its log is its batch's entry and state (docs/design/xapi-forwarding.md).
 */
export const xapiStatements = sqliteTable(
  "xapi_statements",
  {
    /** The statement's UUID, as sent. */
    id: text("id").primaryKey(),
    endpointId: text("endpoint_id")
      .notNull()
      .references(() => xapiEndpoints.id, { onDelete: "cascade" }),
    batchId: text("batch_id"),
    /** XAPI_ACTIVITIES: which verb. */
    verb: text("verb", { enum: XAPI_ACTIVITIES }).notNull(),
    /** The object's activity IRI. */
    activityId: text("activity_id").notNull(),
    userId: text("user_id").notNull(),
    /** The statement's `timestamp`. */
    occurredAt: text("occurred_at").notNull(),
    /** Its own status (never null since the packed log: a statement sharing its batch's has no row). */
    status: text("status", { enum: XAPI_STATEMENT_STATUSES }),
    /** Requests that carried it. */
    attempts: integer("attempts").notNull().default(0),
    lastError: text("last_error"),
    sentAt: text("sent_at"),
    createdAt: text("created_at").notNull(),
    /** When it was sent or given up. */
    completedAt: text("completed_at"),
  },
  (t) => [
    index("xapi_statements_endpoint_idx").on(t.endpointId, t.createdAt, t.id),
    // No index on `batch_id`: a batch names its statements (`entries`), found by primary key.
    /** The statements with a state of their own, by status: the health counts and the back-fill. */
    index("xapi_statements_health_idx")
      .on(t.endpointId, t.status, t.completedAt)
      .where(sql`status IS NOT NULL`),
  ],
);

/** A back-fill's life: waiting for its first message, being worked on, done, or given up. */
export const XAPI_BACKFILL_STATUSES = ["queued", "running", "completed", "failed"] as const;
export type XapiBackfillStatus = (typeof XAPI_BACKFILL_STATUSES)[number];

/** A back-fill: forwarding what an endpoint missed since `since`, a keyset page per chunk. */
export const xapiBackfills = sqliteTable(
  "xapi_backfills",
  {
    id: text("id").primaryKey(),
    endpointId: text("endpoint_id")
      .notNull()
      .references(() => xapiEndpoints.id, { onDelete: "cascade" }),
    since: text("since").notNull(),
    /** Up to when (the request's time): what happened later arrives through the outbox anyway. */
    until: text("until").notNull(),
    status: text("status", { enum: XAPI_BACKFILL_STATUSES }).notNull(),
    /** Which source it is reading (attempts, completions, …) and where in it: opaque to all but the job. */
    cursor: text("cursor", { mode: "json" }).$type<Record<string, unknown>>(),
    statementsQueued: integer("statements_queued").notNull().default(0),
    generation: integer("generation").notNull().default(0),
    leaseId: text("lease_id"),
    leaseUntil: integer("lease_until"),
    heartbeatAt: integer("heartbeat_at").notNull(),
    error: text("error"),
    createdBy: text("created_by").references(() => users.id),
    createdAt: text("created_at").notNull(),
    completedAt: text("completed_at"),
  },
  (t) => [
    index("xapi_backfills_endpoint_idx").on(t.endpointId, t.createdAt),
    /** One back-fill at a time per endpoint: the insert of a second active one conflicts. */
    uniqueIndex("xapi_backfills_one_active_idx").on(t.endpointId).where(sql`status IN ('queued', 'running')`),
  ],
);
