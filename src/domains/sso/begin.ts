import { and, eq } from "drizzle-orm";
import { institutions, ssoDomains } from "../../db/schema";
import type { ServiceContext } from "../../platform/service/context";
import { findByDirectoryKey } from "../../platform/service/directory";
import { emailDomain } from "../institutions/sso/enforced";
import { startRequestForConnection } from "./pending";
import type { Begun } from "./protocol";
import { PENDING_SHAPES, PROTOCOLS } from "./protocols";
import { notConfigured } from "./refusal";

/**
 * `GET /api/auth/sso`: the institution of the e-mail address (the one holding its domain verified)
 * or of the slug, when its SSO is `active`; then its protocol's begin. Unknown domain, unknown slug
 * and inactive SSO answer the same 404, so that nobody learns which domains are customers'. The
 * institution, its connection and the pending request are one D1 round trip.
 */
export async function beginSsoSignIn(
  ctx: ServiceContext,
  input: { email?: string; institution?: string; origin: string },
): Promise<Begun> {
  const domain = input.email && input.email.lastIndexOf("@") >= 1 ? emailDomain(input.email) : "";
  if (!domain && !input.institution) throw notConfigured();
  // A domain verified by (or a slug of) an institution outside DB: found by its directory key, and
  // the pending request is written in that institution's database (design/multi-database.md#entry-points).
  const slug = input.institution as string;
  const started = domain
    ? await findByDirectoryKey(ctx, "sso_domain", domain, () => startFor(ctx, { domain }))
    : await findByDirectoryKey(ctx, "slug", slug, () => startFor(ctx, { slug }));
  if (!started) throw notConfigured();
  const { connection, request } = started;
  return PROTOCOLS[connection.type].begin(ctx, {
    institutionId: connection.institutionId,
    connection,
    request,
    origin: input.origin,
    loginHint: input.email?.trim().toLowerCase(),
  });
}

/** The active connection of the domain's verified holder (or the slug's institution) in the invocation's database, and a pending request. */
function startFor(ctx: ServiceContext, by: { domain: string } | { slug: string }) {
  const { db } = ctx;
  const institutionIds =
    "domain" in by
      ? db
          .select({ id: ssoDomains.institutionId })
          .from(ssoDomains)
          .where(and(eq(ssoDomains.domain, by.domain), eq(ssoDomains.status, "verified")))
      : db.select({ id: institutions.id }).from(institutions).where(eq(institutions.slug, by.slug));
  return startRequestForConnection(ctx, {
    institutionIds: institutionIds.$dynamic(),
    shapes: PENDING_SHAPES,
  });
}
