import type { z } from "@hono/zod-openapi";
import { and, desc, eq } from "drizzle-orm";
import { ltiAccessTokens, ltiConsumers } from "../../../db/schema";
import type { Env } from "../../../env";
import type { Principal } from "../../../platform/auth/principal";
import { requireInstitution } from "../../../platform/auth/principal";
import { database } from "../../../platform/db";
import { ApiError, type FieldError, validationError } from "../../../platform/errors";
import { type PageRequest, pageBounds, pageWithTotal } from "../../../platform/http/pagination";
import { newId, nowIso } from "../../../platform/ids";
import { platformUrlProblem } from "../outbound";
import { LTI } from "../prefixes";
import type { ConsumerSchema, CreateConsumerBody, UpdateConsumerBody } from "../schemas";

export type ConsumerRow = typeof ltiConsumers.$inferSelect;

/** The shared login URL (the fallback for platforms that cannot have one per registration). */
export const LOGIN_PATH = `${LTI}/login` as const;
/** The shared callback (redirect URI of the shared login); each registration's own is `{CALLBACK_PATH}/{id}`. */
export const CALLBACK_PATH = `${LTI}/callback` as const;
export const JWKS_PATH = `${LTI}/jwks` as const;

/** A registration's own callback path: its redirect URI and launch URL. */
export function registrationCallbackPath(consumerId: string): string {
  return `${CALLBACK_PATH}/${consumerId}`;
}

/**
 * The URLs an LMS administrator pastes into the platform, absolute on this API's origin. All three
 * name the registration: a login through its login URL goes to that registration only and asks the
 * platform to post the id_token to its own redirect URI (which the platform checks against its
 * configuration), whose callback redeems only that registration's logins; the key set holds that
 * registration's keys only.
 */
export function toolUrls(origin: string, consumerId: string) {
  const callback = origin + registrationCallbackPath(consumerId);
  return {
    login_url: `${origin}${LOGIN_PATH}/${consumerId}`,
    launch_url: callback,
    jwks_url: `${origin}${JWKS_PATH}/${consumerId}`,
    redirect_uris: [callback],
  };
}

export function presentConsumer(row: ConsumerRow, origin: string): z.infer<typeof ConsumerSchema> {
  return {
    id: row.id,
    institution_id: row.institutionId,
    name: row.name,
    issuer: row.issuer,
    client_id: row.clientId,
    deployment_ids: row.deploymentIds,
    auth_login_url: row.authLoginUrl,
    auth_token_url: row.authTokenUrl,
    jwks_url: row.jwksUrl,
    auth_token_audience: row.authTokenAudience,
    tool: toolUrls(origin, row.id),
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

const URL_FIELDS = ["auth_login_url", "auth_token_url", "jwks_url"] as const;
/** The fields whose change forgets the registration's cached access tokens. */
const TOKEN_FIELDS = [
  ["issuer", "issuer"],
  ["client_id", "clientId"],
  ["auth_token_url", "authTokenUrl"],
  ["auth_token_audience", "authTokenAudience"],
  ["jwks_url", "jwksUrl"],
] as const;

async function checkUrls(
  env: Env,
  body: Partial<Record<(typeof URL_FIELDS)[number], string>>,
): Promise<void> {
  const errors: FieldError[] = [];
  for (const field of URL_FIELDS) {
    const value = body[field];
    if (value === undefined) continue;
    const problem = await platformUrlProblem(env, value);
    if (problem) errors.push({ path: field, message: problem });
  }
  if (errors.length > 0) throw validationError(errors);
}

function duplicate(): ApiError {
  return new ApiError(
    "conflict",
    "This institution has a registration with this issuer and client_id already; change that one instead.",
  );
}

function isUniqueViolation(error: unknown): boolean {
  return /UNIQUE constraint failed/i.test(String((error as { cause?: unknown })?.cause ?? error));
}

export async function createConsumer(
  env: Env,
  institutionId: string,
  body: z.infer<typeof CreateConsumerBody>,
): Promise<ConsumerRow> {
  await checkUrls(env, body);
  const now = nowIso();
  const row: ConsumerRow = {
    id: newId("ltc"),
    institutionId,
    name: body.name,
    issuer: body.issuer,
    clientId: body.client_id,
    deploymentIds: body.deployment_ids,
    authLoginUrl: body.auth_login_url,
    authTokenUrl: body.auth_token_url,
    jwksUrl: body.jwks_url,
    authTokenAudience: body.auth_token_audience ?? null,
    createdAt: now,
    updatedAt: now,
  };
  try {
    await database(env.DB).insert(ltiConsumers).values(row).run();
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicate();
    throw error;
  }
  return row;
}

export async function listConsumers(env: Env, institutionId: string, page: PageRequest) {
  const db = database(env.DB);
  const where = eq(ltiConsumers.institutionId, institutionId);
  const { limit, offset } = pageBounds(page);
  return pageWithTotal(
    db,
    db
      .select()
      .from(ltiConsumers)
      .where(where)
      .orderBy(desc(ltiConsumers.createdAt), desc(ltiConsumers.id))
      .limit(limit)
      .offset(offset),
    ltiConsumers,
    where,
  );
}

/** A registration by id alone, or undefined. */
export async function consumerById(env: Env, id: string): Promise<ConsumerRow | undefined> {
  return database(env.DB).select().from(ltiConsumers).where(eq(ltiConsumers.id, id)).get();
}

/** The registration a caller may manage: platform staff any, others their institution's only (else 404). */
export async function findManagedConsumer(env: Env, principal: Principal, id: string): Promise<ConsumerRow> {
  if (principal.user.role !== "platform_admin")
    return findConsumer(env, requireInstitution(principal).id, id);
  const row = await consumerById(env, id);
  if (!row) throw new ApiError("not_found", `No LTI registration ${id}.`);
  return row;
}

/** The institution's registration, or 404 (also for another institution's id). */
export async function findConsumer(env: Env, institutionId: string, id: string): Promise<ConsumerRow> {
  const row = await database(env.DB)
    .select()
    .from(ltiConsumers)
    .where(and(eq(ltiConsumers.id, id), eq(ltiConsumers.institutionId, institutionId)))
    .get();
  if (!row) throw new ApiError("not_found", `No LTI registration ${id}.`);
  return row;
}

export async function updateConsumer(
  env: Env,
  institutionId: string,
  id: string,
  body: z.infer<typeof UpdateConsumerBody>,
): Promise<ConsumerRow> {
  const before = await findConsumer(env, institutionId, id);
  await checkUrls(env, body);
  const changes: Partial<ConsumerRow> = { updatedAt: nowIso() };
  if (body.name !== undefined) changes.name = body.name;
  if (body.issuer !== undefined) changes.issuer = body.issuer;
  if (body.client_id !== undefined) changes.clientId = body.client_id;
  if (body.deployment_ids !== undefined) changes.deploymentIds = body.deployment_ids;
  if (body.auth_login_url !== undefined) changes.authLoginUrl = body.auth_login_url;
  if (body.auth_token_url !== undefined) changes.authTokenUrl = body.auth_token_url;
  if (body.jwks_url !== undefined) changes.jwksUrl = body.jwks_url;
  if (body.auth_token_audience !== undefined) changes.authTokenAudience = body.auth_token_audience;
  const db = database(env.DB);
  // A token of the platform was obtained for what the registration said then: another issuer, client
  // id, token URL, audience or key set makes it someone else's, so it is forgotten with the change.
  const forgetsTokens = TOKEN_FIELDS.some(
    ([field, column]) => body[field] !== undefined && body[field] !== before[column],
  );
  try {
    const update = db
      .update(ltiConsumers)
      .set(changes)
      .where(and(eq(ltiConsumers.id, id), eq(ltiConsumers.institutionId, institutionId)))
      .returning();
    const [updated] = forgetsTokens
      ? await db.batch([update, db.delete(ltiAccessTokens).where(eq(ltiAccessTokens.consumerId, id))])
      : [await update];
    const [row] = updated;
    if (!row) throw new ApiError("not_found", `No LTI registration ${id}.`);
    return row;
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicate();
    throw error;
  }
}

/** Deletes the registration (its pending states, user links and cached tokens go with it); the launch log stays. */
export async function deleteConsumer(env: Env, institutionId: string, id: string): Promise<void> {
  await findConsumer(env, institutionId, id);
  await database(env.DB)
    .delete(ltiConsumers)
    .where(and(eq(ltiConsumers.id, id), eq(ltiConsumers.institutionId, institutionId)))
    .run();
}
