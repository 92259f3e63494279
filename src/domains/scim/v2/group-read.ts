import { and, asc, eq, or, type SQL, sql } from "drizzle-orm";
import { memberGroups, scimGroups, users } from "../../../db/schema";
import type { Database } from "../../../platform/db";
import type { ServiceContext } from "../../../platform/service/context";
import { ScimError } from "../errors";
import type { ParsedFilter } from "./filter";
import { GROUP_SCHEMA, type Json, type ScimCaller } from "./resources";

/** Reading SCIM Groups: a `scim_groups` row and the members in the group of its display name. */

export type GroupRow = typeof scimGroups.$inferSelect;

function filterWhere(institutionId: string, filter: ParsedFilter): SQL | undefined {
  const alternatives = filter.map((tests) =>
    and(
      ...tests.map((test): SQL => {
        const text = typeof test.value === "string" ? test.value : "";
        switch (test.attribute) {
          case "id":
            return eq(scimGroups.id, text);
          case "displayname":
            return eq(scimGroups.displayName, text);
          case "externalid":
            return eq(scimGroups.externalId, text);
          case "members.value":
            return sql`EXISTS (SELECT 1 FROM ${memberGroups} WHERE ${and(
              eq(memberGroups.institutionId, institutionId),
              eq(memberGroups.userId, text),
            )} AND ${memberGroups.groupName} = ${scimGroups.displayName})`;
          default:
            throw new ScimError(400, `Filtering on ${test.attribute} is not supported.`, "invalidFilter");
        }
      }),
    ),
  );
  return alternatives.length === 0 ? undefined : or(...alternatives);
}

async function membersOf(db: Database, institutionId: string, groupName: string) {
  return db
    .select({ id: users.id, name: users.name })
    .from(memberGroups)
    .innerJoin(users, eq(users.id, memberGroups.userId))
    .where(and(eq(memberGroups.institutionId, institutionId), eq(memberGroups.groupName, groupName)))
    .orderBy(asc(users.id))
    .all();
}

export async function groupResource(db: Database, caller: ScimCaller, row: GroupRow, withMembers: boolean) {
  const resource: Json = {
    schemas: [GROUP_SCHEMA],
    id: row.id,
    ...(row.externalId !== null ? { externalId: row.externalId } : {}),
    displayName: row.displayName,
  };
  if (withMembers) {
    resource.members = (await membersOf(db, caller.institutionId, row.displayName)).map((m) => ({
      value: m.id,
      display: m.name,
      $ref: `${caller.base}/Users/${m.id}`,
    }));
  }
  resource.meta = {
    resourceType: "Group",
    created: row.createdAt,
    lastModified: row.updatedAt,
    location: `${caller.base}/Groups/${row.id}`,
  };
  return resource;
}

export async function loadGroup(db: Database, institutionId: string, id: string): Promise<GroupRow> {
  const row = await db
    .select()
    .from(scimGroups)
    .where(and(eq(scimGroups.institutionId, institutionId), eq(scimGroups.id, id)))
    .get();
  if (!row) throw new ScimError(404, `No Group ${id}.`);
  return row;
}

export async function listGroups(
  ctx: ServiceContext,
  caller: ScimCaller,
  input: { filter: ParsedFilter | null; startIndex: number; count: number; withMembers: boolean },
) {
  const where = and(
    eq(scimGroups.institutionId, caller.institutionId),
    input.filter ? filterWhere(caller.institutionId, input.filter) : undefined,
  );
  const total = await ctx.db.select({ n: sql<number>`count(*)` }).from(scimGroups).where(where).get();
  const rows =
    input.count === 0
      ? []
      : await ctx.db
          .select()
          .from(scimGroups)
          .where(where)
          .orderBy(asc(scimGroups.createdAt), asc(scimGroups.id))
          .limit(input.count)
          .offset(input.startIndex - 1)
          .all();
  const resources: Json[] = [];
  for (const row of rows) resources.push(await groupResource(ctx.db, caller, row, input.withMembers));
  return { total: total?.n ?? 0, resources };
}

export async function getGroup(ctx: ServiceContext, caller: ScimCaller, id: string, withMembers = true) {
  return groupResource(ctx.db, caller, await loadGroup(ctx.db, caller.institutionId, id), withMembers);
}
