import { asc, eq } from "drizzle-orm";
import { ssoConnections, ssoDomains } from "../../db/schema";
import type { Database } from "../../platform/db";
import type { SsoConnection } from "../institutions/sso/service";

/** An institution's connection when `active`, with the domains it holds verified (as `activeConnection`). */
export interface ActiveConnection {
  connection: SsoConnection;
  verifiedDomains: string[];
}

/**
 * The reads of `activeConnection` (institutions/sso/service.ts) as batch items, for a sign-in's
 * callback to make in the round trip that takes its pending request: `activeFrom` reads their results.
 */
export function connectionReads(db: Database, institutionId: string) {
  return [
    db.select().from(ssoConnections).where(eq(ssoConnections.institutionId, institutionId)),
    db
      .select({ domain: ssoDomains.domain, status: ssoDomains.status })
      .from(ssoDomains)
      .where(eq(ssoDomains.institutionId, institutionId))
      .orderBy(asc(ssoDomains.domain)),
  ] as const;
}

export function activeFrom([connections, domains]: readonly [
  SsoConnection[],
  { domain: string; status: string }[],
]): ActiveConnection | null {
  const connection = connections[0];
  if (connection?.state !== "active") return null;
  return {
    connection,
    verifiedDomains: domains.filter((row) => row.status === "verified").map((row) => row.domain),
  };
}
