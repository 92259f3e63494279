import { and, eq } from "drizzle-orm";
import { institutions, ssoDomains } from "../../db/schema";
import type { ServiceContext } from "../../platform/service/context";
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
  const { db } = ctx;
  const domain = input.email && input.email.lastIndexOf("@") >= 1 ? emailDomain(input.email) : "";
  const institutionIds = domain
    ? db
        .select({ id: ssoDomains.institutionId })
        .from(ssoDomains)
        .where(and(eq(ssoDomains.domain, domain), eq(ssoDomains.status, "verified")))
    : input.institution
      ? db.select({ id: institutions.id }).from(institutions).where(eq(institutions.slug, input.institution))
      : null;
  if (!institutionIds) throw notConfigured();
  const started = await startRequestForConnection(ctx, {
    institutionIds: institutionIds.$dynamic(),
    shapes: PENDING_SHAPES,
  });
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
