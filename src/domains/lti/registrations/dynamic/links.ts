import { and, eq, exists, gt, isNull, lte, or } from "drizzle-orm";
import { ltiRegistrationLinks } from "../../../../db/schema";
import { batchGuard } from "../../../../platform/batch";
import { randomBytes, sha256Hex, toBase64Url } from "../../../../platform/crypto/encoding";
import { ApiError } from "../../../../platform/errors";
import { newId, nowIso } from "../../../../platform/ids";
import type { PrincipalContext, ServiceContext } from "../../../../platform/service/context";
import { enterInstitutionToWrite } from "../../../../platform/service/directory";
import { ltiInstitution } from "../../policy";
import { REGISTER_PATH } from "../tool-urls";

/**
 * Dynamic registration links: what an institution admin hands to an LMS administrator instead of
 * the values to copy. A link is a secret (32 random bytes, stored only as its SHA-256), bound to
 * the admin's institution, valid 24 hours, and makes one registration. An attempt takes it for a
 * lease, so that two attempts (the LMS opening the page twice) never register twice; a failed
 * attempt gives it back, a successful one spends it in the batch that stores the registration. The
 * secret names its institution (`<institution id>.<random>`, as an invitation token does), so that the
 * attempt runs where the institution lives (design/multi-database.md#entry-points).
 */

export type RegistrationLinkRow = typeof ltiRegistrationLinks.$inferSelect;

export const LINK_VALIDITY_MS = 24 * 3_600_000;
/**
 * How long an attempt holds the link: longer than its two requests to the platform can take (each
 * bounded by the outbound time-out), so that a lease lapses only when its attempt died.
 */
const CLAIM_MS = 2 * 60_000;

/** A new link of the caller's institution: the absolute URL of `GET /api/lti/register` with its secret. */
export async function createRegistrationLink(ctx: PrincipalContext, input: { origin: string }) {
  const institutionId = ltiInstitution(ctx.principal);
  const secret = `${institutionId}.${toBase64Url(randomBytes(32))}`;
  const now = ctx.now();
  const expiresAt = now + LINK_VALIDITY_MS;
  await ctx.db
    .insert(ltiRegistrationLinks)
    .values({
      id: newId("lrl"),
      institutionId,
      secretHash: await sha256Hex(secret),
      createdBy: ctx.principal.user.id,
      createdAt: nowIso(now),
      expiresAt,
    })
    .run();
  return {
    url: `${input.origin}${REGISTER_PATH}?${new URLSearchParams({ link: secret })}`,
    expires_at: nowIso(expiresAt),
  };
}

export interface ClaimedLink {
  link: RegistrationLinkRow;
  claimId: string;
}

/**
 * Takes the link for this attempt (one conditional UPDATE: unused, unexpired, not held by a live
 * attempt), or says why not: unknown 404, used or expired 410, held by another attempt 409.
 */
export async function claimLink(ctx: ServiceContext, secret: string): Promise<ClaimedLink> {
  // A link made before links named their institution names none: it is looked up in DB.
  const dot = secret.indexOf(".");
  if (dot > 0) await enterInstitutionToWrite(ctx, secret.slice(0, dot));
  const { db } = ctx;
  const secretHash = await sha256Hex(secret);
  const now = ctx.now();
  const claimId = toBase64Url(randomBytes(16));
  const [link] = await db
    .update(ltiRegistrationLinks)
    .set({ claimId, claimedUntil: now + CLAIM_MS })
    .where(
      and(
        eq(ltiRegistrationLinks.secretHash, secretHash),
        isNull(ltiRegistrationLinks.usedAt),
        gt(ltiRegistrationLinks.expiresAt, now),
        or(isNull(ltiRegistrationLinks.claimedUntil), lte(ltiRegistrationLinks.claimedUntil, now)),
      ),
    )
    .returning();
  if (link) return { link, claimId };
  const found = await db
    .select()
    .from(ltiRegistrationLinks)
    .where(eq(ltiRegistrationLinks.secretHash, secretHash))
    .get();
  if (!found)
    throw new ApiError(
      "lti_registration_link_unknown",
      "This registration link is not one Lingua issued. Ask your Lingua administrator for a new link and paste the whole URL.",
    );
  if (found.usedAt !== null)
    throw new ApiError(
      "lti_registration_link_used",
      "This registration link has been used already: a link registers one platform once. Ask your Lingua administrator for a new link to register again.",
    );
  if (found.expiresAt <= now)
    throw new ApiError(
      "lti_registration_link_expired",
      `This registration link expired at ${nowIso(found.expiresAt)}. Ask your Lingua administrator for a new link.`,
    );
  throw new ApiError(
    "lti_registration_in_progress",
    "A registration with this link is under way already. Wait a minute, then check the tool's registrations before trying again.",
  );
}

/** Gives the link back after a failed attempt (if this attempt still holds it): it stays usable. */
export async function releaseLink(ctx: ServiceContext, claimed: ClaimedLink): Promise<void> {
  await ctx.db
    .update(ltiRegistrationLinks)
    .set({ claimId: null, claimedUntil: null })
    .where(
      and(
        eq(ltiRegistrationLinks.id, claimed.link.id),
        eq(ltiRegistrationLinks.claimId, claimed.claimId),
        isNull(ltiRegistrationLinks.usedAt),
      ),
    )
    .run();
}

/**
 * The statements that spend the link for registration `consumerId`, to run in the batch that stores
 * it: a guard that fails the whole batch unless this attempt still holds the unused link, the
 * statements of the change (placed after the guard by the caller), then the link marked used.
 */
export function spendLink(ctx: ServiceContext, claimed: ClaimedLink, consumerId: string) {
  const { db } = ctx;
  const held = and(
    eq(ltiRegistrationLinks.id, claimed.link.id),
    eq(ltiRegistrationLinks.claimId, claimed.claimId),
    isNull(ltiRegistrationLinks.usedAt),
  );
  return {
    guard: batchGuard(
      db,
      exists(db.select({ id: ltiRegistrationLinks.id }).from(ltiRegistrationLinks).where(held)),
    ),
    spend: db
      .update(ltiRegistrationLinks)
      .set({ usedAt: ctx.now(), consumerId, claimId: null, claimedUntil: null })
      .where(held),
  };
}
