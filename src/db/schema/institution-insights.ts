import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/**
 * Per-institution learning activity, one row per institution, local day, learner and course with any
 * recorded attempt: the analytics read sums and counts distinct learners over these rows and never
 * touches `attempts`. Maintained by increments in the same D1 batch as each recording (the learner's
 * institution at recording time), back-filled from `attempts` by a data migration. `day` is the
 * learner's local day of the attempt, as in `daily_activity`. The institution, the learner and the
 * course are their numbers (`institutions.number`, `users.number`, `courses.number`), not their ids
 * (docs/design/capacity.md, "Integer keys"): the triggers and the analytics find them in the statement
 * and write and answer with ids.
 */
export const institutionActivityDays = sqliteTable(
  "institution_activity_days",
  {
    institutionNumber: integer("institution_number").notNull(),
    day: text("day").notNull(),
    userNumber: integer("user_number").notNull(),
    courseNumber: integer("course_number").notNull(),
    attempts: integer("attempts").notNull(),
    seconds: integer("seconds").notNull(),
    xp: integer("xp").notNull(),
    /** Lessons and courses completed by an attempt of that day. */
    lessonsCompleted: integer("lessons_completed").notNull(),
    coursesCompleted: integer("courses_completed").notNull(),
  },
  (t) => [
    /**
     * The key is a learner's days in order: a group's rows (the range of each of its members) and the
     * triggers' probes (has the learner another row in this day, week, month?) read it, as `NOT
     * INDEXED` (the key is the table itself). The table is `WITHOUT ROWID` (hand-written in its
     * migrations, `…_institution_activity_days_without_rowid`, `…_institution_activity_days_on_numbers`; drizzle
     * does not model it); a rebuild must keep it (docs/design/capacity.md, "Narrower progress rows").
     */
    primaryKey({ columns: [t.institutionNumber, t.userNumber, t.day, t.courseNumber] }),
    /** A (learner, course) pair's probe: has it a day in a range? */
    index("institution_activity_days_user_course_idx").on(
      t.institutionNumber,
      t.userNumber,
      t.courseNumber,
      t.day,
    ),
  ],
);

/*
 * What the analytics read instead of `institution_activity_days`: every table below is derived from
 * it (and from `member_groups`, `users`, `learner_stats`) by the SQLite triggers of the migration
 * `…_institution_analytics_rollups`, inside the statement that changes the source row, so inside the
 * recording's own D1 batch. No code writes them; the back-fill rebuilds them from attempts. See
 * docs/design/institution-analytics.md.
 */

/** Scopes of `institution_activity_totals`: the whole institution, one course, one group (its members now). */
export const ACTIVITY_SCOPES = ["all", "course", "group"] as const;

/**
 * Additive sums per institution, scope, period and key. `period` is `d:<day>`, `w:<Monday>` or
 * `m:<first of month>`; `key` is `''` (scope `all`), a course id or a group's name. Scope `all` has
 * day rows (sums and distinct learners of the day), week and month rows (distinct learners only, each
 * learner counted when their first activity of the period is recorded); scopes `course` and `group`
 * have day and month rows (sums only).
 */
export const institutionActivityTotals = sqliteTable(
  "institution_activity_totals",
  {
    institutionId: text("institution_id").notNull(),
    scope: text("scope", { enum: ACTIVITY_SCOPES }).notNull(),
    period: text("period").notNull(),
    key: text("key").notNull(),
    learners: integer("learners").notNull().default(0),
    attempts: integer("attempts").notNull().default(0),
    seconds: integer("seconds").notNull().default(0),
    xp: integer("xp").notNull().default(0),
    lessonsCompleted: integer("lessons_completed").notNull().default(0),
    coursesCompleted: integer("courses_completed").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.institutionId, t.scope, t.period, t.key] })],
);

/**
 * One row per institution, learner and course with any activity: the first and last active day, and
 * the learner's groups now (`member_groups`' names, sorted, joined by U+001F; kept by triggers). Distinct
 * learners of a range are read here: a pair is active in [from, to] when its first or last day lies
 * in it, inactive when both lie on one side, and otherwise one probe of `institution_activity_days`.
 */
export const institutionLearnerCourses = sqliteTable(
  "institution_learner_courses",
  {
    institutionId: text("institution_id").notNull(),
    userId: text("user_id").notNull(),
    courseId: text("course_id").notNull(),
    firstDay: text("first_day").notNull(),
    lastDay: text("last_day").notNull(),
    groups: text("groups").notNull().default(""),
  },
  (t) => [primaryKey({ columns: [t.institutionId, t.userId, t.courseId] })],
);

/** Members now per institution (`group_name` `''`) and per group; `learners`: with the learner role (institution row only). */
export const institutionMemberCounts = sqliteTable(
  "institution_member_counts",
  {
    institutionId: text("institution_id").notNull(),
    groupName: text("group_name").notNull(),
    members: integer("members").notNull().default(0),
    learners: integer("learners").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.institutionId, t.groupName] })],
);

/**
 * What the analytics' `ETag` is made of: per institution, a revision of its members now (`month`
 * `''`: members, groups, CEFR levels) and one per month of activity (`YYYY-MM`), each raised by the
 * triggers that change the rollups. A range's validator reads these few rows, never the rollups.
 */
export const institutionAnalyticsRevisions = sqliteTable(
  "institution_analytics_revisions",
  {
    institutionId: text("institution_id").notNull(),
    month: text("month").notNull(),
    revision: integer("revision").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.institutionId, t.month] })],
);

/** Learners (role `learner`, members now) per institution, `learner_stats.cefr_levels` key and level. */
export const institutionCefrCounts = sqliteTable(
  "institution_cefr_counts",
  {
    institutionId: text("institution_id").notNull(),
    skill: text("skill").notNull(),
    level: text("level").notNull(),
    learners: integer("learners").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.institutionId, t.skill, t.level] })],
);

export const SSO_TYPES = ["saml", "oidc"] as const;
export type SsoType = (typeof SSO_TYPES)[number];
export const SSO_STATES = ["draft", "active", "inactive"] as const;
export type SsoState = (typeof SSO_STATES)[number];

/** Which SAML attribute or ID-token claim carries each member field; null: not taken from SSO. */
export interface SsoMapping {
  email: string;
  name: string | null;
  role: string | null;
  groups: string | null;
}

export interface SamlSettings {
  idp_entity_id: string | null;
  sso_url: string | null;
  certificates: string[];
  metadata_url: string | null;
  attribute_mapping: SsoMapping;
  /** IdP-initiated (unsolicited) Responses accepted; absent in settings stored before it existed: false. */
  idp_initiated?: boolean;
}

export interface OidcSettings {
  issuer: string | null;
  client_id: string | null;
  scopes: string[];
  claim_mapping: SsoMapping;
  /** From the issuer's discovery document, kept for sign-in. */
  authorization_endpoint: string | null;
  token_endpoint: string | null;
  jwks_uri: string | null;
  /** From the discovery document (absent on settings saved before sign-in existed: RS256, client_secret_basic). */
  id_token_signing_alg_values_supported?: string[] | null;
  token_endpoint_auth_methods_supported?: string[] | null;
  token_endpoint_auth_signing_alg_values_supported?: string[] | null;
  /** Chosen by the administrator; absent or null: a client-secret method the discovery document allows. */
  token_endpoint_auth_method?: "client_secret_basic" | "client_secret_post" | "private_key_jwt" | null;
}

/** One SSO connection per institution. The OIDC client secret is stored sealed, never in `oidc`. */
export const ssoConnections = sqliteTable("sso_connections", {
  institutionId: text("institution_id").primaryKey(),
  type: text("type", { enum: SSO_TYPES }).notNull(),
  state: text("state", { enum: SSO_STATES }).notNull(),
  enforced: integer("enforced", { mode: "boolean" }).notNull().default(false),
  saml: text("saml", { mode: "json" }).$type<SamlSettings>(),
  oidc: text("oidc", { mode: "json" }).$type<OidcSettings>(),
  clientSecretSealed: text("client_secret_sealed"),
  /**
   * The institution admin who keeps signing in with a password while SSO is enforced (break-glass,
   * for when the IdP is down); null: nobody but platform staff.
   */
  breakGlassUserId: text("break_glass_user_id"),
  /** Whether the IdP's role mapping may make a member `institution_admin` (else capped at `instructor`). */
  mappingMayGrantAdmin: integer("mapping_may_grant_admin", { mode: "boolean" }).notNull().default(false),
  createdAt: text("created_at").notNull().default(sql`(strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))`),
  updatedAt: text("updated_at").notNull(),
});

export const SSO_DOMAIN_STATUSES = ["pending", "verified"] as const;
export type SsoDomainStatus = (typeof SSO_DOMAIN_STATUSES)[number];
export const SSO_DOMAIN_METHODS = ["dns", "manual"] as const;
export type SsoDomainMethod = (typeof SSO_DOMAIN_METHODS)[number];

/**
 * E-mail domains an institution claims for SSO, each with its verification. A claim routes nobody
 * until it is verified (a DNS TXT record carrying `token`, or platform staff); several institutions
 * may claim one domain, at most one holds it verified (the partial unique index). The token is random
 * per institution and domain; a domain removed from the configuration loses its row, and with it its
 * token and status. See docs/design/sso-domains.md.
 */
export const ssoDomains = sqliteTable(
  "sso_domains",
  {
    institutionId: text("institution_id").notNull(),
    domain: text("domain").notNull(),
    /** 32 lower-case hex digits; claims that predate verification get theirs from the migration. */
    token: text("token").notNull().default(sql`(lower(hex(randomblob(16))))`),
    status: text("status", { enum: SSO_DOMAIN_STATUSES }).notNull().default("pending"),
    /** How it was verified; null while pending. */
    method: text("method", { enum: SSO_DOMAIN_METHODS }),
    verifiedAt: text("verified_at"),
    createdAt: text("created_at").notNull().default(sql`(strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))`),
    updatedAt: text("updated_at").notNull().default(sql`(strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))`),
  },
  (t) => [
    primaryKey({ columns: [t.institutionId, t.domain] }),
    /** Routing: the one institution holding a domain verified. */
    uniqueIndex("sso_domains_verified_idx").on(t.domain).where(sql`status = 'verified'`),
  ],
);

export const COMPLIANCE_TYPES = ["dpa", "gdpr", "ferpa", "coppa", "soc2_report", "vpat"] as const;
export type ComplianceType = (typeof COMPLIANCE_TYPES)[number];
/** What is stored; `expired` is never stored, it is read from `expires_at`. */
export const STORED_COMPLIANCE_STATUSES = ["not_started", "in_review", "signed", "not_applicable"] as const;
export type StoredComplianceStatus = (typeof STORED_COMPLIANCE_STATUSES)[number];

export const complianceDocuments = sqliteTable(
  "compliance_documents",
  {
    institutionId: text("institution_id").notNull(),
    type: text("type", { enum: COMPLIANCE_TYPES }).notNull(),
    required: integer("required", { mode: "boolean" }).notNull(),
    status: text("status", { enum: STORED_COMPLIANCE_STATUSES }).notNull(),
    signedAt: text("signed_at"),
    expiresAt: text("expires_at"),
    documentUrl: text("document_url"),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.institutionId, t.type] })],
);
