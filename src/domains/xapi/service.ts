import { and, desc, eq, type SQL, sql } from "drizzle-orm";
import { xapiEndpoints } from "../../db/schema";
import { xapiSecretBinding } from "../../platform/crypto/sealed-values";
import { seal } from "../../platform/crypto/sealing";
import { ApiError, type FieldError, validationError } from "../../platform/errors";
import { type PageRequest, pageBounds, pageWithTotal } from "../../platform/http/pagination";
import { newId, nowIso } from "../../platform/ids";
import { checkOutboundUrl } from "../../platform/outbound";
import { forgetHolderTokens } from "../../platform/outbound/access-tokens";
import type { ServiceContext } from "../../platform/service/context";
import { type EndpointRow, tokenHolder } from "./lrs-client";
import {
  type CreateXapiEndpointInput,
  MAX_XAPI_ENDPOINTS_PER_INSTITUTION,
  type UpdateXapiEndpointInput,
} from "./schemas";
import { CREATE_ENDPOINT_SQL, deleteEndpointKeysQuery } from "./sql";

export type { EndpointRow };

/**
 * The URL as it will be stored, or the field's problem: the outbound gate's verdict at save time
 * (as webhooks and LTI judge theirs; a name that does not resolve yet is accepted, and every request
 * checks again). `base`: the endpoint's base URL, which gets a trailing `/` and may carry no query.
 */
async function judgeUrl(
  ctx: ServiceContext,
  path: string,
  raw: string,
  base: boolean,
): Promise<{ url: string } | { error: FieldError }> {
  const verdict = await checkOutboundUrl(ctx.env, raw);
  if (!verdict.ok && verdict.code === "target_refused") return { error: { path, message: verdict.problem } };
  const url = new URL(raw);
  if (!base) return { url: url.toString() };
  if (url.search) return { error: { path, message: "must not contain a query string" } };
  if (!url.pathname.endsWith("/")) url.pathname = `${url.pathname}/`;
  return { url: url.toString() };
}

interface CheckedUrls {
  endpoint: string;
  tokenUrl: string | null;
}

/** Both URLs judged at once, so a 422 names every refused one. */
async function checkUrls(
  ctx: ServiceContext,
  input: { endpoint: string; auth: { type: string; token_url?: string } },
): Promise<CheckedUrls> {
  const [endpoint, token] = await Promise.all([
    judgeUrl(ctx, "endpoint", input.endpoint, true),
    input.auth.type === "oauth2" && input.auth.token_url !== undefined
      ? judgeUrl(ctx, "auth.token_url", input.auth.token_url, false)
      : null,
  ]);
  const errors = [endpoint, token].flatMap((v) => (v && "error" in v ? [v.error] : []));
  if (errors.length > 0) throw validationError(errors);
  return {
    endpoint: (endpoint as { url: string }).url,
    tokenUrl: token && "url" in token ? token.url : null,
  };
}

/** The credential columns of `auth` (the secret apart). */
function credentialColumns(auth: UpdateXapiEndpointInput["auth"], tokenUrl: string | null) {
  return auth.type === "basic"
    ? { authType: "basic" as const, username: auth.username, tokenUrl: null, clientId: null, scope: null }
    : {
        authType: "oauth2" as const,
        username: null,
        tokenUrl,
        clientId: auth.client_id,
        scope: auth.scope ?? null,
      };
}

function secretOf(auth: UpdateXapiEndpointInput["auth"]): string | undefined {
  return auth.type === "basic" ? auth.password : auth.client_secret;
}

/** A page of the institution's endpoints, newest first (ties by id). */
export async function listEndpoints(
  ctx: ServiceContext,
  { institutionId, page }: { institutionId: string; page: PageRequest },
) {
  const { limit, offset } = pageBounds(page);
  const where = eq(xapiEndpoints.institutionId, institutionId);
  const pageQuery = ctx.db
    .select()
    .from(xapiEndpoints)
    .where(where)
    .orderBy(desc(xapiEndpoints.createdAt), desc(xapiEndpoints.id))
    .limit(limit)
    .offset(offset);
  return pageWithTotal(ctx.db, pageQuery, xapiEndpoints, where);
}

/** The institution's endpoint, or 404 (another institution's included). */
export async function findEndpoint(
  ctx: ServiceContext,
  { institutionId, id }: { institutionId: string; id: string },
): Promise<EndpointRow> {
  const row = await ctx.db
    .select()
    .from(xapiEndpoints)
    .where(and(eq(xapiEndpoints.id, id), eq(xapiEndpoints.institutionId, institutionId)))
    .get();
  if (!row) throw new ApiError("not_found", `No xAPI endpoint ${id}.`);
  return row;
}

/**
 * Registers an endpoint, its secret sealed to its row. At most MAX_XAPI_ENDPOINTS_PER_INSTITUTION,
 * checked inside the INSERT so that concurrent creations cannot overshoot it.
 */
export async function createEndpoint(
  ctx: ServiceContext,
  { owner, input }: { owner: { institutionId: string; userId: string }; input: CreateXapiEndpointInput },
): Promise<EndpointRow> {
  const urls = await checkUrls(ctx, input);
  const id = newId("xep");
  const now = nowIso(ctx.now());
  const row: EndpointRow = {
    id,
    institutionId: owner.institutionId,
    name: input.name,
    endpoint: urls.endpoint,
    version: input.version,
    ...credentialColumns(input.auth, urls.tokenUrl),
    secretSealed: await seal(secretOf(input.auth) ?? "", ctx.config.encryptionKey, xapiSecretBinding(id)),
    credentialsVersion: 1,
    activities: input.activities,
    actorFormat: input.actor_format,
    enabled: input.enabled,
    lastSuccessAt: null,
    lastErrorAt: null,
    lastError: null,
    failingSince: null,
    failingNotifiedAt: null,
    createdBy: owner.userId,
    createdAt: now,
    updatedAt: now,
  };
  const result = await ctx.d1
    .prepare(CREATE_ENDPOINT_SQL)
    .bind(
      row.id,
      row.institutionId,
      row.name,
      row.endpoint,
      row.version,
      row.authType,
      row.username,
      row.tokenUrl,
      row.clientId,
      row.scope,
      row.secretSealed,
      JSON.stringify(row.activities),
      row.actorFormat,
      row.enabled ? 1 : 0,
      row.createdBy,
      now,
      MAX_XAPI_ENDPOINTS_PER_INSTITUTION,
    )
    .run();
  if (result.meta.changes === 0)
    throw new ApiError(
      "conflict",
      `An institution can have at most ${MAX_XAPI_ENDPOINTS_PER_INSTITUTION} xAPI endpoints; delete one first.`,
    );
  return row;
}

/**
 * Replaces the endpoint's writable fields (PUT: what is left out takes its default, as at creation).
 * The secret may be left out only while the auth type and identity stay; then the stored one is
 * kept. A change of credentials or of the endpoint URL raises `credentials_version`, so a cached
 * OAuth 2 token of the old ones is never used again.
 */
export async function updateEndpoint(
  ctx: ServiceContext,
  { institutionId, id, input }: { institutionId: string; id: string; input: UpdateXapiEndpointInput },
): Promise<EndpointRow> {
  const current = await findEndpoint(ctx, { institutionId, id });
  const urls = await checkUrls(ctx, input);
  const credentials = credentialColumns(input.auth, urls.tokenUrl);
  const secret = secretOf(input.auth);
  const sameIdentity =
    credentials.authType === current.authType &&
    credentials.username === current.username &&
    credentials.tokenUrl === current.tokenUrl &&
    credentials.clientId === current.clientId;
  if (secret === undefined && !sameIdentity) {
    const field = input.auth.type === "basic" ? "auth.password" : "auth.client_secret";
    throw validationError([
      {
        path: field,
        message:
          "is required when the auth type, username, token_url or client_id changes (it may be left out only to keep the stored secret for the same credentials)",
      },
    ]);
  }
  const credentialsChanged =
    secret !== undefined ||
    !sameIdentity ||
    credentials.scope !== current.scope ||
    urls.endpoint !== current.endpoint;
  const secretSealed =
    secret === undefined
      ? current.secretSealed
      : await seal(secret, ctx.config.encryptionKey, xapiSecretBinding(id));
  const changes = {
    name: input.name,
    endpoint: urls.endpoint,
    version: input.version,
    ...credentials,
    secretSealed,
    activities: input.activities,
    actorFormat: input.actor_format,
    enabled: input.enabled,
    updatedAt: nowIso(ctx.now()),
  };
  // Raised in the statement itself, so two concurrent changes raise it twice.
  const bump: { credentialsVersion?: SQL } = credentialsChanged
    ? { credentialsVersion: sql`${xapiEndpoints.credentialsVersion} + 1` }
    : {};
  const [updated] = await ctx.db
    .update(xapiEndpoints)
    .set({ ...changes, ...bump })
    .where(and(eq(xapiEndpoints.id, id), eq(xapiEndpoints.institutionId, institutionId)))
    .returning();
  if (!updated) throw new ApiError("not_found", `No xAPI endpoint ${id}.`);
  return updated;
}

/**
 * Deletes the endpoint: forwarding stops at once; its statements' keys, then (foreign keys cascade)
 * its batches, statements and back-fills go with it, and its cached access tokens, in one batch.
 */
export async function deleteEndpoint(
  ctx: ServiceContext,
  { institutionId, id }: { institutionId: string; id: string },
): Promise<void> {
  const [, deleted] = await ctx.db.batch([
    deleteEndpointKeysQuery(ctx.db, institutionId, id),
    ctx.db
      .delete(xapiEndpoints)
      .where(and(eq(xapiEndpoints.id, id), eq(xapiEndpoints.institutionId, institutionId)))
      .returning({ id: xapiEndpoints.id }),
    forgetHolderTokens(ctx, tokenHolder(id)),
  ]);
  if (deleted.length === 0) throw new ApiError("not_found", `No xAPI endpoint ${id}.`);
}
