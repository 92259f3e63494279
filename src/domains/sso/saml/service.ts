import { eq } from "drizzle-orm";
import { ssoConnections } from "../../../db/schema";
import { ApiError } from "../../../platform/errors";
import type { ServiceContext } from "../../../platform/service/context";
import { spMetadataXml } from "./metadata";

/**
 * The SP metadata of an institution whose SSO connection is SAML, in any state (an administrator sets
 * the IdP up from it before turning SSO on). Anything else, an unknown institution included, is the
 * same 404: the public URL says nothing about which institutions exist.
 */
export async function samlMetadata(
  ctx: ServiceContext,
  { institutionId, origin }: { institutionId: string; origin: string },
): Promise<string> {
  const connection = await ctx.db
    .select({ type: ssoConnections.type })
    .from(ssoConnections)
    .where(eq(ssoConnections.institutionId, institutionId))
    .get();
  if (connection?.type !== "saml")
    throw new ApiError("not_found", "No SAML connection for this institution.");
  return spMetadataXml(origin, institutionId);
}
