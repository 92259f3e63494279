import { eq } from "drizzle-orm";
import { institutions } from "../../db/schema";
import type { ServiceContext } from "../../platform/service/context";
import { activeConnection, institutionForSsoEmail } from "../institutions/sso/service";
import type { Begun } from "./protocol";
import { PROTOCOLS } from "./protocols";
import { notConfigured } from "./refusal";

/**
 * `GET /api/auth/sso`: the institution of the e-mail address (the one holding its domain verified)
 * or of the slug, when its SSO is `active`; then its protocol's begin. Unknown domain, unknown slug
 * and inactive SSO answer the same 404, so that nobody learns which domains are customers'.
 */
export async function beginSsoSignIn(
  ctx: ServiceContext,
  input: { email?: string; institution?: string; origin: string },
): Promise<Begun> {
  const institutionId = input.email
    ? await institutionForSsoEmail(ctx, input.email)
    : input.institution
      ? ((
          await ctx.db
            .select({ id: institutions.id })
            .from(institutions)
            .where(eq(institutions.slug, input.institution))
            .get()
        )?.id ?? null)
      : null;
  if (!institutionId) throw notConfigured();
  const active = await activeConnection(ctx, institutionId);
  if (!active) throw notConfigured();
  return PROTOCOLS[active.connection.type].begin(ctx, {
    institutionId,
    connection: active.connection,
    origin: input.origin,
    loginHint: input.email?.trim().toLowerCase(),
  });
}
