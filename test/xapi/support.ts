import { env } from "cloudflare:test";
import { asc, eq, inArray } from "drizzle-orm";
import {
  attempts,
  outboxEvents,
  type XapiActivity,
  xapiBatches,
  xapiEndpoints,
  xapiStatementKeys,
  xapiStatements,
} from "../../src/db/schema";
import type { Fact } from "../../src/domains/xapi/statements";
import { xapiSecretBinding } from "../../src/platform/crypto/sealed-values";
import { seal } from "../../src/platform/crypto/sealing";
import { database } from "../../src/platform/db";
import { newId } from "../../src/platform/ids";
import { backgroundContext, type ServiceContext } from "../../src/platform/service/context";
import { HeldQueue } from "../exports/support";
import { callJson } from "../helpers/api";
import { createPublishedCourse } from "../helpers/progress-fixture";
import type { TestUser } from "../helpers/tenants";
import { waitUntil } from "../webhooks/support";

export const XAPI_QUEUE = "lingua-xapi-statements";
export const XAPI_DLQ = "lingua-xapi-statements-dlq";
export const ENCRYPTION_KEY = "dGVzdC1lbmNyeXB0aW9uLWtleS0zMi1ieXRlcy0hISE=";

const db = () => database(env.DB);

/**
 * An xAPI endpoint written through drizzle (the endpoints API is another part of the issue), its
 * Basic password sealed as the API seals it. `url` is the LRS's base URL (a `/` is added).
 */
export async function createEndpoint(
  institutionId: string,
  url: string,
  options: {
    activities?: XapiActivity[];
    enabled?: boolean;
    username?: string;
    password?: string;
    version?: "1.0.3" | "2.0.0";
  } = {},
) {
  const id = newId("xep");
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
  await db()
    .insert(xapiEndpoints)
    .values({
      id,
      institutionId,
      name: `LRS ${id}`,
      endpoint: url.endsWith("/") ? url : `${url}/`,
      version: options.version ?? "1.0.3",
      authType: "basic",
      username: options.username ?? "lingua",
      secretSealed: await seal(options.password ?? "s3cret-pass", ENCRYPTION_KEY, xapiSecretBinding(id)),
      activities: options.activities ?? ["answered", "completed", "progressed", "mastered", "earned"],
      enabled: options.enabled ?? true,
      createdAt: now,
      updatedAt: now,
    });
  return id;
}

export async function updateEndpoint(id: string, changes: Partial<typeof xapiEndpoints.$inferInsert>) {
  await db().update(xapiEndpoints).set(changes).where(eq(xapiEndpoints.id, id));
}

export async function endpointRow(id: string) {
  return db().select().from(xapiEndpoints).where(eq(xapiEndpoints.id, id)).get();
}

/**
 * The endpoint's whole forwarding log as the API reads it (each batch's entries, a statement sharing
 * its batch's state with the batch's), in the order the statements happened, with each one's batch.
 */
export async function statementsOf(endpointId: string) {
  const { results } = await env.DB.prepare(
    `SELECT j.value ->> 0 AS id, b.endpoint_id, b.id AS batch_id, j.value ->> 1 AS verb, j.value ->> 2 AS activity_id,
        j.value ->> 3 AS user_id, j.value ->> 4 AS occurred_at, coalesce(s.status, b.log_status) AS status,
        CASE WHEN b.log_status IS NULL THEN s.attempts ELSE b.log_attempts END AS attempts,
        CASE WHEN b.log_status IS NULL THEN s.last_error ELSE b.log_error END AS last_error,
        CASE WHEN b.log_status IS NULL THEN s.sent_at WHEN b.log_status = 'sent' THEN b.completed_at END AS sent_at,
        b.created_at,
        CASE WHEN b.log_status IS NULL THEN s.completed_at WHEN b.log_status = 'sent' THEN b.completed_at END AS completed_at
      FROM xapi_batches b JOIN json_each(b.entries) j
        LEFT JOIN xapi_statements s ON b.log_status IS NULL AND s.id = j.value ->> 0
      WHERE b.endpoint_id = ?1 ORDER BY occurred_at, id`,
  )
    .bind(endpointId)
    .all<Record<string, string | number | null>>();
  return results.map((r) => ({
    id: r.id as string,
    endpointId: r.endpoint_id as string,
    batchId: r.batch_id as string,
    verb: r.verb as string,
    activityId: r.activity_id as string,
    userId: r.user_id as string,
    occurredAt: r.occurred_at as string,
    status: r.status as "pending" | "sent" | "failed" | null,
    attempts: r.attempts as number,
    lastError: r.last_error as string | null,
    sentAt: r.sent_at as string | null,
    createdAt: r.created_at as string,
    completedAt: r.completed_at as string | null,
  }));
}

/** The endpoint's statements with a state of their own, as stored (a statement sharing its batch's has no row). */
export async function statementRowsOf(endpointId: string) {
  return db()
    .select()
    .from(xapiStatements)
    .where(eq(xapiStatements.endpointId, endpointId))
    .orderBy(asc(xapiStatements.occurredAt), asc(xapiStatements.id));
}

/** The endpoint's statement keys (one per statement id stored). */
export async function statementKeysOf(endpointId: string) {
  return db()
    .select({ id: xapiStatementKeys.id, batchId: xapiStatementKeys.batchId })
    .from(xapiStatementKeys)
    .where(
      inArray(
        xapiStatementKeys.batchId,
        db().select({ id: xapiBatches.id }).from(xapiBatches).where(eq(xapiBatches.endpointId, endpointId)),
      ),
    );
}

export async function batchesOf(endpointId: string) {
  return db()
    .select()
    .from(xapiBatches)
    .where(eq(xapiBatches.endpointId, endpointId))
    .orderBy(asc(xapiBatches.id));
}

export async function batchRow(id: string) {
  return db().select().from(xapiBatches).where(eq(xapiBatches.id, id)).get();
}

/** Attempts at the first `count` items of a new course (one lesson of `count` items), recorded over the API. */
export async function recordAttempts(
  learner: TestUser,
  count: number,
  options: { score?: number; lessons?: number } = {},
) {
  const lessons = options.lessons ?? 1;
  const course = await createPublishedCourse({
    lessons,
    blocksPerLesson: 1,
    itemsPerBlock: Math.ceil(count / lessons),
    skills: ["reading"],
    levels: ["A1"],
  });
  const occurredAt = new Date(Date.now() - 60_000).toISOString();
  const body = {
    attempts: course.items.slice(0, count).map((id) => ({
      id: crypto.randomUUID(),
      training_item_id: id,
      score: options.score ?? 1,
      correct: (options.score ?? 1) >= 0.5,
      duration_seconds: 20,
      occurred_at: occurredAt,
    })),
  };
  const { res, body: answer } = await callJson("/api/progress/attempts", { token: learner.token, body });
  if (res.status !== 200) throw new Error(`attempts failed: ${res.status} ${JSON.stringify(answer)}`);
  return { course, attemptIds: body.attempts.map((a) => a.id), summary: answer.summary };
}

/** The learner's outbox events, internal ones too. */
export async function outboxOfUser(userId: string) {
  return db()
    .select()
    .from(outboxEvents)
    .where(eq(outboxEvents.userId, userId))
    .orderBy(asc(outboxEvents.createdAt), asc(outboxEvents.id));
}

/** Waits until every outbox event of the user went through the dispatcher (every subscriber has it). */
export async function dispatched(userId: string) {
  await waitUntil(async () => {
    const events = await outboxOfUser(userId);
    return events.length > 0 && events.every((e) => e.dispatchedAt !== null);
  });
}

/** `answered` facts of stored attempts. */
export async function answeredFacts(attemptIds: string[]): Promise<Fact[]> {
  const rows = await db().select().from(attempts).where(inArray(attempts.id, attemptIds));
  const order = new Map(attemptIds.map((id, i) => [id, i]));
  rows.sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
  return rows.map((attempt) => ({ verb: "answered", attempt }));
}

/** A service context whose xAPI queue holds its messages, so a test hands them to the consumer itself. */
export function heldContext(now?: () => number): { ctx: ServiceContext; queue: HeldQueue } {
  const queue = new HeldQueue();
  const bindings = { ...env, XAPI_QUEUE: queue as unknown as Queue } as Cloudflare.Env;
  const ctx = backgroundContext(
    bindings,
    { waitUntil: (promise: Promise<unknown>) => void promise.catch(() => undefined) },
    "queue",
    now,
  );
  return { ctx, queue };
}

/** The statements a request to the LRS carried: the JSON array it POSTed. */
export function carried(body: string): { id: string; [key: string]: unknown }[] {
  return JSON.parse(body) as { id: string }[];
}

/**
 * Statements stored as the delivery leaves those with a state of their own: each in a batch of its
 * own (made at its `createdAt`, `log_status` null, its log entry), with its row and its key.
 */
export async function storeOwnStateStatements(
  rows: (typeof xapiStatements.$inferInsert & { batchId?: string | null })[],
) {
  const batches = new Map<string, (typeof xapiStatements.$inferInsert)[]>();
  const stored = rows.map((r) => ({ ...r, batchId: r.batchId ?? newId("xbt") }));
  for (const r of stored) batches.set(r.batchId, [...(batches.get(r.batchId) ?? []), r]);
  await db()
    .insert(xapiBatches)
    .values(
      [...batches].map(([id, of]) => ({
        id,
        endpointId: of[0]!.endpointId,
        status: of.every((r) => r.status !== "pending") ? ("succeeded" as const) : ("pending" as const),
        entries: JSON.stringify(of.map((r) => [r.id, r.verb, r.activityId, r.userId, r.occurredAt])),
        statementCount: of.length,
        logStatus: null,
        createdAt: of[0]!.createdAt,
        completedAt: of.every((r) => r.status !== "pending") ? of[0]!.createdAt : null,
      })),
    );
  await db().insert(xapiStatements).values(stored);
  await db()
    .insert(xapiStatementKeys)
    .values(stored.map((r) => ({ id: r.id, batchId: r.batchId })));
}
