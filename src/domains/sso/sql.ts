import { type SQL, sql } from "drizzle-orm";
import { type SsoType, ssoConnections } from "../../db/schema";

/**
 * SSO sign-in's raw SQL: the rows that start a pending request in the same round trip as the read of
 * the connection it is for. Tested in test/sso/sql.test.ts.
 */

/** What a pending request stores; the nonce and PKCE verifier per protocol, since the row's protocol is the connection's. */
export interface PendingRequestValues {
  state: string;
  browserBindingHash: string;
  expiresAt: number;
  createdAt: string;
  byProtocol: Record<SsoType, { nonce: string; codeVerifier: string | null }>;
}

/**
 * The rows of a pending request for the institution(s) `institutionIds` (a subquery: the verified
 * holder of a domain, or the institution of a slug) whose connection is `active`: the connection's
 * protocol, that protocol's nonce and verifier. No row otherwise. For `insert(ssoRequests).select(…)`,
 * so the columns are in the table's order.
 */
export function pendingRequestRows(values: PendingRequestValues, institutionIds: SQL): SQL {
  const perProtocol = (pick: (v: { nonce: string; codeVerifier: string | null }) => string | null) =>
    sql.join(
      Object.entries(values.byProtocol).map(([protocol, v]) => sql`WHEN ${protocol} THEN ${pick(v)}`),
      sql` `,
    );
  return sql`SELECT ${values.state}, ${ssoConnections.institutionId}, ${ssoConnections.type}, ${values.browserBindingHash},
  CASE ${ssoConnections.type} ${perProtocol((v) => v.nonce)} END,
  CASE ${ssoConnections.type} ${perProtocol((v) => v.codeVerifier)} END,
  ${values.expiresAt}, NULL, ${values.createdAt}
FROM ${ssoConnections}
WHERE ${ssoConnections.state} = 'active' AND ${ssoConnections.institutionId} IN (${institutionIds})`;
}
