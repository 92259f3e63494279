import { type SQL, sql } from "drizzle-orm";
import { ssoDomains } from "../../../db/schema";

/**
 * SSO's raw SQL: one drizzle `sql` fragment of the domain verification's batch. Tested in
 * test/institutions/sql.test.ts.
 */

/**
 * True while a row of `sso_domains` matches `claim`: the statement that moves a domain away from
 * another institution runs only if the claim a verification proved (same institution, domain and
 * token) still stands when the batch runs.
 */
export function claimStands(claim: SQL | undefined): SQL {
  return sql`EXISTS (SELECT 1 FROM ${ssoDomains} WHERE ${claim})`;
}
