import { and, eq } from "drizzle-orm";
import { ssoConnections, ssoDomains } from "../../../db/schema";
import type { Database } from "../../../platform/db";

/**
 * Enforced SSO as other domains read it (members' invitations; auth's password sign-in reads
 * `enforcedSsoFor` in service.ts): a leaf that imports only the tables, so members may use it without
 * importing the institutions domain that imports members.
 */

/** The verified domains of the institution whose SSO is active and enforced; empty otherwise. */
export async function enforcedSsoDomains(db: Database, institutionId: string): Promise<Set<string>> {
  const rows = await db
    .select({ domain: ssoDomains.domain })
    .from(ssoDomains)
    .innerJoin(ssoConnections, eq(ssoConnections.institutionId, ssoDomains.institutionId))
    .where(
      and(
        eq(ssoDomains.institutionId, institutionId),
        eq(ssoDomains.status, "verified"),
        eq(ssoConnections.state, "active"),
        eq(ssoConnections.enforced, true),
      ),
    );
  return new Set(rows.map((row) => row.domain));
}

/** The domain of an e-mail address as SSO routes it: after the last `@`, lower-cased, no trailing dot. */
export function emailDomain(email: string): string {
  return email
    .slice(email.lastIndexOf("@") + 1)
    .trim()
    .toLowerCase()
    .replace(/\.$/, "");
}
