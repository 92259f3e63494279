import { and, count, desc, eq, isNull, sql } from "drizzle-orm";
import { scimSettings, scimTokens } from "../../db/schema";
import { enforce } from "../../platform/auth/policy";
import { batchGuard, isBatchGuardFailure } from "../../platform/batch";
import { randomBytes, sha256Hex, toBase64Url } from "../../platform/crypto/encoding";
import { ApiError } from "../../platform/errors";
import { type PageRequest, pageBounds, pageWithTotal } from "../../platform/http/pagination";
import { newId, nowIso } from "../../platform/ids";
import { commit } from "../../platform/service/commit";
import type { PrincipalContext } from "../../platform/service/context";
import { directoryClaim, releaseKey } from "../../platform/service/directory";
import { findInstitution } from "../institutions/access";
import { mayManageScimOf } from "./policy";

export type ScimTokenRow = typeof scimTokens.$inferSelect;

/** `scim_` + 32 random bytes in base64url: 256 bits, stored only as SHA-256 (like API tokens). */
export const SCIM_TOKEN_PREFIX = "scim_";
const SCIM_TOKEN_PATTERN = /^scim_[A-Za-z0-9_-]{43}$/;
const DISPLAY_PREFIX_LENGTH = SCIM_TOKEN_PREFIX.length + 6;
/** Live SCIM tokens an institution may hold (one per identity provider and a rotation's overlap, with room). */
export const SCIM_TOKEN_LIMIT = 10;

export function looksLikeScimToken(value: string): boolean {
  return SCIM_TOKEN_PATTERN.test(value);
}

async function mintScimToken() {
  const plain = SCIM_TOKEN_PREFIX + toBase64Url(randomBytes(32));
  return { plain, hash: await sha256Hex(plain), displayPrefix: plain.slice(0, DISPLAY_PREFIX_LENGTH) };
}

/** The institution whose SCIM tokens or settings the caller asks for: 404 unless it reaches it. */
async function reachable(ctx: PrincipalContext, institutionId: string) {
  enforce(mayManageScimOf(ctx.principal, institutionId));
  return findInstitution(ctx, institutionId);
}

const live = (institutionId: string) =>
  and(eq(scimTokens.institutionId, institutionId), isNull(scimTokens.revokedAt));

/** Issues a SCIM token; its plain value exists only in the return value. */
export async function issueScimToken(ctx: PrincipalContext, input: { institutionId: string; name: string }) {
  const institution = await reachable(ctx, input.institutionId);
  const minted = await mintScimToken();
  const row: ScimTokenRow = {
    id: newId("sct"),
    institutionId: institution.id,
    name: input.name,
    tokenHash: minted.hash,
    prefix: minted.displayPrefix,
    createdBy: ctx.principal.user.id,
    createdAt: nowIso(ctx.now()),
    lastUsedAt: null,
    revokedAt: null,
  };
  try {
    await commit(ctx, {
      statements: [
        batchGuard(
          ctx.db,
          sql`(SELECT count(*) FROM ${scimTokens} WHERE ${live(institution.id)}) < ${SCIM_TOKEN_LIMIT}`,
        ),
        ctx.db.insert(scimTokens).values(row),
      ],
      // Outside DB, the token is found by its hash's directory key (design/multi-database.md).
      claims: [directoryClaim("scim_token", row.tokenHash, institution.id, "scim_tokens.token_hash")],
    });
  } catch (error) {
    if (isBatchGuardFailure(error))
      throw new ApiError(
        "conflict",
        `An institution holds at most ${SCIM_TOKEN_LIMIT} SCIM tokens; revoke one it no longer uses.`,
      );
    throw error;
  }
  return { row, plain: minted.plain };
}

/** The institution's live SCIM tokens, newest first (ties by id). */
export async function listScimTokens(
  ctx: PrincipalContext,
  input: { institutionId: string; page: PageRequest },
) {
  const institution = await reachable(ctx, input.institutionId);
  const { limit, offset } = pageBounds(input.page);
  const where = live(institution.id);
  return pageWithTotal(
    ctx.db,
    ctx.db
      .select()
      .from(scimTokens)
      .where(where)
      .orderBy(desc(scimTokens.createdAt), desc(scimTokens.id))
      .limit(limit)
      .offset(offset),
    scimTokens,
    where,
  );
}

/** Revokes a SCIM token at once: the next SCIM request with it answers 401. Unknown or revoked: 404. */
export async function revokeScimToken(
  ctx: PrincipalContext,
  input: { institutionId: string; tokenId: string },
) {
  const institution = await reachable(ctx, input.institutionId);
  const revoked = await ctx.db
    .update(scimTokens)
    .set({ revokedAt: nowIso(ctx.now()) })
    .where(and(eq(scimTokens.id, input.tokenId), live(institution.id)))
    .returning({ tokenHash: scimTokens.tokenHash })
    .all();
  const [gone] = revoked;
  if (!gone) throw new ApiError("not_found", `No SCIM token ${input.tokenId}.`);
  // Outside DB the key goes with it: a revoked token then finds nothing, and answers 401 as unknown.
  await releaseKey(ctx, "scim_token", gone.tokenHash, institution.id);
}

export interface ScimSettings {
  departmentAsGroup: boolean;
}

export async function scimSettingsOf(
  ctx: { db: PrincipalContext["db"] },
  institutionId: string,
): Promise<ScimSettings> {
  const row = await ctx.db
    .select({ departmentAsGroup: scimSettings.departmentAsGroup })
    .from(scimSettings)
    .where(eq(scimSettings.institutionId, institutionId))
    .get();
  return { departmentAsGroup: row?.departmentAsGroup ?? false };
}

export async function readScimSettings(ctx: PrincipalContext, input: { institutionId: string }) {
  const institution = await reachable(ctx, input.institutionId);
  const [settings, tokens] = await Promise.all([
    scimSettingsOf(ctx, institution.id),
    ctx.db.select({ n: count() }).from(scimTokens).where(live(institution.id)).get(),
  ]);
  return { ...settings, activeTokens: tokens?.n ?? 0 };
}

export async function putScimSettings(
  ctx: PrincipalContext,
  input: { institutionId: string; departmentAsGroup: boolean },
) {
  const institution = await reachable(ctx, input.institutionId);
  const now = nowIso(ctx.now());
  await ctx.db
    .insert(scimSettings)
    .values({ institutionId: institution.id, departmentAsGroup: input.departmentAsGroup, updatedAt: now })
    .onConflictDoUpdate({
      target: scimSettings.institutionId,
      set: { departmentAsGroup: input.departmentAsGroup, updatedAt: now },
    })
    .run();
  return readScimSettings(ctx, input);
}
