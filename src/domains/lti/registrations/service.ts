import type { z } from "@hono/zod-openapi";
import { and, desc, eq, type SQL, sql } from "drizzle-orm";
import { ltiConsumers } from "../../../db/schema";
import { ApiError, type FieldError, validationError } from "../../../platform/errors";
import { type PageRequest, pageBounds, pageWithTotal } from "../../../platform/http/pagination";
import { newId, nowIso } from "../../../platform/ids";
import { forgetHolderTokens } from "../../../platform/outbound/access-tokens";
import { commit } from "../../../platform/service/commit";
import type { PrincipalContext, ServiceContext } from "../../../platform/service/context";
import { findByDirectoryKey } from "../../../platform/service/directory";
import { platformUrlProblem } from "../outbound";
import { ltiInstitution } from "../policy";
import { claimClientKey, registrationClaim, releaseRegistrationKeys } from "./directory-keys";
import type { CreateConsumerBody, UpdateConsumerBody } from "./schemas";

export type ConsumerRow = typeof ltiConsumers.$inferSelect;

/** The platform token cache's holder of a registration's access tokens (grades/access-token.ts). */
export function ltiTokenHolder(consumerId: string): string {
  return `lti:${consumerId}`;
}

const URL_FIELDS = ["auth_login_url", "auth_token_url", "jwks_url"] as const;
/** The fields whose change raises the registration's credentials version (its cached access tokens go unused). */
const TOKEN_FIELDS = [
  ["issuer", ltiConsumers.issuer],
  ["client_id", ltiConsumers.clientId],
  ["auth_token_url", ltiConsumers.authTokenUrl],
  ["auth_token_audience", ltiConsumers.authTokenAudience],
  ["jwks_url", ltiConsumers.jwksUrl],
] as const;

/**
 * `credentials_version`, raised by one when any of the token fields sent differs from the value the
 * row holds as the UPDATE runs (not as it was read before): a value sent unchanged raises nothing, and
 * of two concurrent changes each raises it. The platform's token cache keys a registration's tokens by
 * this version, so a token obtained for what the registration said before is never read again.
 */
function raisedVersion(body: z.infer<typeof UpdateConsumerBody>): SQL | undefined {
  const changed = TOKEN_FIELDS.filter(([field]) => body[field] !== undefined).map(
    ([field, column]) => sql`${column} IS NOT ${body[field] ?? null}`,
  );
  if (changed.length === 0) return undefined;
  return sql`${ltiConsumers.credentialsVersion} + (CASE WHEN ${sql.join(changed, sql` OR `)} THEN 1 ELSE 0 END)`;
}

/** The statement that raises a registration's credentials version (its signing key was rotated). */
export function raiseCredentialsVersion(ctx: ServiceContext, consumerId: string) {
  return ctx.db
    .update(ltiConsumers)
    .set({ credentialsVersion: sql`${ltiConsumers.credentialsVersion} + 1` })
    .where(eq(ltiConsumers.id, consumerId));
}

async function checkUrls(
  ctx: ServiceContext,
  body: Partial<Record<(typeof URL_FIELDS)[number], string>>,
): Promise<void> {
  const errors: FieldError[] = [];
  for (const field of URL_FIELDS) {
    const value = body[field];
    if (value === undefined) continue;
    const problem = await platformUrlProblem(ctx, value);
    if (problem) errors.push({ path: field, message: problem });
  }
  if (errors.length > 0) throw validationError(errors);
}

export function duplicate(): ApiError {
  return new ApiError(
    "conflict",
    "This institution has a registration with this issuer and client_id already; change that one instead.",
  );
}

export function isUniqueViolation(error: unknown): boolean {
  return /UNIQUE constraint failed/i.test(String((error as { cause?: unknown })?.cause ?? error));
}

/**
 * A new registration of `institutionId` as a row, its platform URLs checked by the outbound gate
 * first (422 naming each refused one). The one way a registration is made: by hand (`createConsumer`)
 * and by dynamic registration (dynamic/register.ts), which stores it in its own batch. `id` is given
 * when the tool's URLs had to be known before the row (dynamic registration sends them first).
 */
export async function newConsumerRow(
  ctx: ServiceContext,
  institutionId: string,
  body: Omit<z.infer<typeof CreateConsumerBody>, "deployment_ids"> & { deployment_ids: string[] },
  id = newId("ltc"),
): Promise<ConsumerRow> {
  await checkUrls(ctx, body);
  const now = nowIso(ctx.now());
  return {
    id,
    institutionId,
    name: body.name,
    issuer: body.issuer,
    clientId: body.client_id,
    deploymentIds: body.deployment_ids,
    authLoginUrl: body.auth_login_url,
    authTokenUrl: body.auth_token_url,
    jwksUrl: body.jwks_url,
    authTokenAudience: body.auth_token_audience ?? null,
    credentialsVersion: 1,
    createdAt: now,
    updatedAt: now,
  };
}

/** Registers a platform for the caller's institution (`ltiInstitution`); a second (issuer, client id) there is 409. */
export async function createConsumer(
  ctx: PrincipalContext,
  body: z.infer<typeof CreateConsumerBody>,
): Promise<ConsumerRow> {
  // The caller's institution first: an account of none is refused before its URLs are looked up.
  const institutionId = ltiInstitution(ctx.principal);
  const row = await newConsumerRow(ctx, institutionId, body);
  try {
    // Outside DB, its public URLs find it by its id's directory key (design/multi-database.md).
    await commit(ctx, {
      statements: [ctx.db.insert(ltiConsumers).values(row)],
      claims: [registrationClaim(row)],
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicate();
    throw error;
  }
  await claimClientKey(ctx, row);
  return row;
}

/** A page of the caller's institution's registrations, newest first (ties by id), with the total. */
export async function listConsumers(ctx: PrincipalContext, page: PageRequest) {
  const { db } = ctx;
  const where = eq(ltiConsumers.institutionId, ltiInstitution(ctx.principal));
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
export async function consumerById(ctx: ServiceContext, id: string): Promise<ConsumerRow | undefined> {
  return ctx.db.select().from(ltiConsumers).where(eq(ltiConsumers.id, id)).get();
}

/**
 * The registration `id` names, for the public entry points that carry it (its login URL, callback,
 * key set, a login's state): read in `DB`, else, by its `lti_registration` key, in its institution's
 * database, where the invocation then carries on (design/multi-database.md#entry-points).
 */
export async function registrationAnywhere(
  ctx: ServiceContext,
  id: string,
): Promise<ConsumerRow | undefined> {
  return (await findByDirectoryKey(ctx, "lti_registration", id, () => consumerById(ctx, id))) ?? undefined;
}

/** The caller's institution's registration, or 404 (also for another institution's id). */
export async function findConsumer(ctx: PrincipalContext, id: string): Promise<ConsumerRow> {
  const row = await ctx.db
    .select()
    .from(ltiConsumers)
    .where(and(eq(ltiConsumers.id, id), eq(ltiConsumers.institutionId, ltiInstitution(ctx.principal))))
    .get();
  if (!row) throw new ApiError("not_found", `No LTI registration ${id}.`);
  return row;
}

/** Changes the fields sent of the caller's institution's registration (404 otherwise). */
export async function updateConsumer(
  ctx: PrincipalContext,
  input: { id: string; body: z.infer<typeof UpdateConsumerBody> },
): Promise<ConsumerRow> {
  const { id, body } = input;
  const institutionId = ltiInstitution(ctx.principal);
  const before = await findConsumer(ctx, id);
  await checkUrls(ctx, body);
  const changes: Partial<Omit<ConsumerRow, "credentialsVersion">> & { credentialsVersion?: SQL } = {
    updatedAt: nowIso(ctx.now()),
  };
  if (body.name !== undefined) changes.name = body.name;
  if (body.issuer !== undefined) changes.issuer = body.issuer;
  if (body.client_id !== undefined) changes.clientId = body.client_id;
  if (body.deployment_ids !== undefined) changes.deploymentIds = body.deployment_ids;
  if (body.auth_login_url !== undefined) changes.authLoginUrl = body.auth_login_url;
  if (body.auth_token_url !== undefined) changes.authTokenUrl = body.auth_token_url;
  if (body.jwks_url !== undefined) changes.jwksUrl = body.jwks_url;
  if (body.auth_token_audience !== undefined) changes.authTokenAudience = body.auth_token_audience;
  // A token of the platform was obtained for what the registration said then: another issuer, client
  // id, token URL, audience or key set makes it someone else's, so the version moves with the change.
  const version = raisedVersion(body);
  if (version) changes.credentialsVersion = version;
  try {
    const [row] = await ctx.db
      .update(ltiConsumers)
      .set(changes)
      .where(and(eq(ltiConsumers.id, id), eq(ltiConsumers.institutionId, institutionId)))
      .returning();
    if (!row) throw new ApiError("not_found", `No LTI registration ${id}.`);
    if (row.issuer !== before.issuer || row.clientId !== before.clientId) {
      await releaseRegistrationKeys(ctx, before, { id: false });
      await claimClientKey(ctx, row);
    }
    return row;
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicate();
    throw error;
  }
}

/** Deletes the registration (its pending states, user links and cached tokens go with it); the launch log stays. */
export async function deleteConsumer(ctx: PrincipalContext, id: string): Promise<void> {
  const row = await findConsumer(ctx, id);
  const { db } = ctx;
  await db.batch([
    db
      .delete(ltiConsumers)
      .where(and(eq(ltiConsumers.id, id), eq(ltiConsumers.institutionId, ltiInstitution(ctx.principal)))),
    forgetHolderTokens(ctx, ltiTokenHolder(id)),
  ]);
  await releaseRegistrationKeys(ctx, row);
}
