import { env } from "cloudflare:test";
import { asc, eq, inArray } from "drizzle-orm";
import {
  attempts,
  outboxEvents,
  type XapiActivity,
  xapiBatches,
  xapiEndpoints,
  xapiStatements,
} from "../../src/db/schema";
import { forwardingLogQuery } from "../../src/domains/xapi/forwarding-log";
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

/** The endpoint's forwarding log as the API reads it (a statement sharing its batch's state, with the batch's). */
export async function statementsOf(endpointId: string) {
  return forwardingLogQuery(db(), eq(xapiStatements.endpointId, endpointId)).orderBy(
    asc(xapiStatements.occurredAt),
    asc(xapiStatements.id),
  );
}

/** The endpoint's statement rows as stored (`status` null: sharing the batch's state). */
export async function statementRowsOf(endpointId: string) {
  return db()
    .select()
    .from(xapiStatements)
    .where(eq(xapiStatements.endpointId, endpointId))
    .orderBy(asc(xapiStatements.occurredAt), asc(xapiStatements.id));
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
