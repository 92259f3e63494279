import { type SQL, sql } from "drizzle-orm";
import { scimUserAttributes, users } from "../../db/schema";

/**
 * The SCIM domain's raw SQL fragments (the rest is drizzle's query builder), each tested in
 * test/scim/users.test.ts ("SCIM sql.ts").
 */

/** A member one of whose e-mail addresses, as the IdP sent them, is `address` (any case). */
export function listsEmail(institutionId: string, address: string): SQL {
  return sql`EXISTS (SELECT 1 FROM ${scimUserAttributes}, json_each(${scimUserAttributes.emails}) AS e
    WHERE ${scimUserAttributes.userId} = ${users.id} AND ${scimUserAttributes.institutionId} = ${institutionId}
      AND lower(e.value ->> 'value') = ${address.toLowerCase()})`;
}

/** The SCIM attributes of a member are still as read (`null`: there was no row). */
export function attributesAsRead(
  institutionId: string,
  userId: string,
  read: {
    givenName: string | null;
    familyName: string | null;
    emails: string | null;
    department: string | null;
  } | null,
): SQL {
  if (!read)
    return sql`NOT EXISTS (SELECT 1 FROM ${scimUserAttributes} WHERE ${scimUserAttributes.userId} = ${userId} AND ${scimUserAttributes.institutionId} = ${institutionId})`;
  return sql`EXISTS (SELECT 1 FROM ${scimUserAttributes} WHERE ${scimUserAttributes.userId} = ${userId}
    AND ${scimUserAttributes.institutionId} = ${institutionId}
    AND ${scimUserAttributes.givenName} IS ${read.givenName} AND ${scimUserAttributes.familyName} IS ${read.familyName}
    AND ${scimUserAttributes.emails} IS ${read.emails} AND ${scimUserAttributes.department} IS ${read.department})`;
}
