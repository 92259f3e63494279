import { getTableConfig, type SQLiteTable } from "drizzle-orm/sqlite-core";
import * as schema from "./schema";

/**
 * Which rows of each table are an institution's: what moving an institution to another database
 * copies, verifies and deletes (docs/design/multi-database.md#moving-an-institution-online). Every
 * table of the schema is here (test/platform/institution-move.test.ts fails for one that is not), in
 * an order where a row's parent (a foreign key) comes before it: copies run in this order, deletes in
 * the reverse one.
 *
 * - `institution`: the rows whose `column` is the institution's id;
 * - `institutionNumber`: the rows whose `column` is the institution's number (`institutions.number`);
 * - `member`: the rows whose `column` is the id of a user of the institution (`users.institution_id`);
 * - `memberNumber`: the rows whose `column` is the number of a user of the institution (`users.number`:
 *   the tables kept for good carry numbers, docs/design/capacity.md, "Integer keys");
 * - `parent`: the rows whose `column` is the key of a row of `parent` that is the institution's;
 * - `token`: the rows whose `column` is `token:<id>` of an API token of the institution (idempotency records);
 * - `none`: not one institution's (the catalogue, copied into every database; the directory; platform counters).
 */
export type Ownership =
  | { by: "institution"; column: string }
  | { by: "institutionNumber"; column: string }
  | { by: "member"; column: string }
  | { by: "memberNumber"; column: string }
  | { by: "parent"; column: string; parent: SQLiteTable; parentKey: string }
  | { by: "token"; column: string }
  | { by: "none"; why: string };

export interface InstitutionTable {
  table: SQLiteTable;
  owner: Ownership;
}

const institution = (column = "institution_id"): Ownership => ({ by: "institution", column });
const institutionNumber = (column = "institution_number"): Ownership => ({ by: "institutionNumber", column });
const member = (column = "user_id"): Ownership => ({ by: "member", column });
const memberNumber = (column = "user_number"): Ownership => ({ by: "memberNumber", column });
const parent = (column: string, of: SQLiteTable, parentKey = "id"): Ownership => ({
  by: "parent",
  column,
  parent: of,
  parentKey,
});
const none = (why: string): Ownership => ({ by: "none", why });

const CATALOGUE = "the catalogue: the same in every database, copied into each";

export const INSTITUTION_TABLES: readonly InstitutionTable[] = [
  // Not the institution's.
  { table: schema.courses, owner: none(CATALOGUE) },
  { table: schema.courseTags, owner: none(CATALOGUE) },
  { table: schema.lessons, owner: none(CATALOGUE) },
  { table: schema.trainings, owner: none(CATALOGUE) },
  { table: schema.trainingItems, owner: none(CATALOGUE) },
  {
    table: schema.institutionDatabases,
    owner: none("the directory, in the first database only: the move switches it"),
  },
  {
    table: schema.directoryKeys,
    owner: none("the directory, in the first database only: the move writes the keys itself"),
  },
  { table: schema.institutionMoves, owner: none("the moves themselves, in the first database only") },
  { table: schema.platformCounters, owner: none("platform-wide counters of each database") },
  { table: schema.sweepCursors, owner: none("where each database's sweeps stopped") },
  {
    table: schema.databaseNumbering,
    owner: none("each database's own index and sequence: a moved row keeps the number it has"),
  },
  {
    table: schema.xpRankCounts,
    owner: { by: "institution", column: "scope" }, // scope 'platform' is each database's own
  },
  // The institution and its members.
  { table: schema.institutions, owner: institution("id") },
  { table: schema.users, owner: institution() },
  { table: schema.apiTokens, owner: institution() },
  { table: schema.idempotencyKeys, owner: { by: "token", column: "scope" } },
  { table: schema.invitations, owner: institution() },
  { table: schema.memberGroups, owner: institution() },
  { table: schema.scimSettings, owner: institution() },
  { table: schema.scimTokens, owner: institution() },
  { table: schema.scimGroups, owner: institution() },
  { table: schema.scimUserAttributes, owner: institution() },
  { table: schema.ssoConnections, owner: institution() },
  { table: schema.ssoDomains, owner: institution() },
  { table: schema.ssoRequests, owner: institution() },
  { table: schema.ssoSessionCodes, owner: institution() },
  { table: schema.ssoIdentities, owner: institution() },
  { table: schema.ssoSignIns, owner: institution() },
  { table: schema.ssoSigningKeys, owner: institution() },
  { table: schema.samlAssertionReplays, owner: institution() },
  { table: schema.complianceDocuments, owner: institution() },
  { table: schema.billingAccounts, owner: institution() },
  { table: schema.stripeEvents, owner: institution() },
  // Activity.
  { table: schema.attempts, owner: institution() },
  { table: schema.attemptArchiveFiles, owner: institution() },
  { table: schema.attemptArchiveClaims, owner: institution() },
  { table: schema.itemProgress, owner: memberNumber() },
  { table: schema.lessonProgress, owner: memberNumber() },
  { table: schema.courseProgress, owner: member() },
  { table: schema.dailyActivity, owner: memberNumber() },
  { table: schema.studyTime, owner: member() },
  { table: schema.skillEvidence, owner: member() },
  { table: schema.learnerStats, owner: member() },
  { table: schema.weeklyXp, owner: member() },
  { table: schema.achievements, owner: member() },
  { table: schema.institutionActivityDays, owner: institutionNumber() },
  { table: schema.institutionActivityTotals, owner: institution() },
  { table: schema.institutionLearnerCourses, owner: institution() },
  { table: schema.institutionMemberCounts, owner: institution() },
  { table: schema.institutionAnalyticsRevisions, owner: institution() },
  { table: schema.institutionCefrCounts, owner: institution() },
  // The outbox and what hangs off it.
  { table: schema.outboxEvents, owner: institution() },
  { table: schema.webhooks, owner: institution() },
  { table: schema.webhookDeliveries, owner: parent("webhook_id", schema.webhooks) },
  { table: schema.webhookDeliveryAttempts, owner: parent("delivery_id", schema.webhookDeliveries) },
  { table: schema.exportJobs, owner: institution() },
  { table: schema.bulkJobs, owner: institution() },
  { table: schema.bulkJobRows, owner: parent("job_id", schema.bulkJobs) },
  // LTI.
  { table: schema.ltiConsumers, owner: institution() },
  { table: schema.ltiKeys, owner: parent("consumer_id", schema.ltiConsumers) },
  { table: schema.ltiStates, owner: parent("consumer_id", schema.ltiConsumers) },
  { table: schema.ltiUserLinks, owner: parent("consumer_id", schema.ltiConsumers) },
  { table: schema.ltiLaunches, owner: institution() },
  { table: schema.ltiSessionCodes, owner: parent("launch_id", schema.ltiLaunches) },
  { table: schema.ltiPassbacks, owner: institution() },
  { table: schema.ltiRegistrationLinks, owner: institution() },
  { table: schema.ltiRosterSyncs, owner: institution() },
  // xAPI.
  { table: schema.xapiEndpoints, owner: institution() },
  { table: schema.xapiBatches, owner: parent("endpoint_id", schema.xapiEndpoints) },
  { table: schema.xapiStatementKeys, owner: parent("batch_id", schema.xapiBatches) },
  { table: schema.xapiStatements, owner: parent("endpoint_id", schema.xapiEndpoints) },
  { table: schema.xapiBackfills, owner: parent("endpoint_id", schema.xapiEndpoints) },
  // Outbound credentials cached for a row of the institution (`lti:<id>`, `xapi:<id>`).
  {
    table: schema.outboundAccessTokens,
    owner: none("a cache of outbound credentials: fetched again where it is missing"),
  },
];

/** A table's name, its columns and its primary key's columns, as SQLite names them. */
export function describeTable(table: SQLiteTable): { name: string; columns: string[]; primaryKey: string[] } {
  const config = getTableConfig(table);
  const columns = config.columns.map((column) => column.name);
  const composite = config.primaryKeys[0]?.columns.map((column) => column.name);
  const primaryKey =
    composite ?? config.columns.filter((column) => column.primary).map((column) => column.name);
  return { name: config.name, columns, primaryKey };
}

/**
 * The SQL condition selecting the institution's rows of a table (`?1` is the institution's id), in
 * whichever database it runs: the same condition on both sides of a move.
 */
export function institutionCondition(owner: Ownership): string {
  switch (owner.by) {
    case "institution":
      return `"${owner.column}" = ?1`;
    case "institutionNumber":
      return `"${owner.column}" = (SELECT number FROM institutions WHERE id = ?1)`;
    case "member":
      return `"${owner.column}" IN (SELECT id FROM users WHERE institution_id = ?1)`;
    case "memberNumber":
      return `"${owner.column}" IN (SELECT number FROM users WHERE institution_id = ?1)`;
    case "token":
      return `"${owner.column}" IN (SELECT 'token:' || id FROM api_tokens WHERE institution_id = ?1)`;
    case "parent": {
      const entry = INSTITUTION_TABLES.find((t) => t.table === owner.parent);
      if (!entry) throw new Error("parent table not in INSTITUTION_TABLES");
      const { name } = describeTable(owner.parent);
      return `"${owner.column}" IN (SELECT "${owner.parentKey}" FROM "${name}" WHERE ${institutionCondition(entry.owner)})`;
    }
    case "none":
      throw new Error("not an institution's table");
  }
}

/** The tables a move carries, in copy order. */
export function movedTables(): { name: string; columns: string[]; primaryKey: string[]; where: string }[] {
  return INSTITUTION_TABLES.filter((entry) => entry.owner.by !== "none").map((entry) => ({
    ...describeTable(entry.table),
    where: institutionCondition(entry.owner),
  }));
}
