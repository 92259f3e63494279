import { and, asc, eq, inArray, or, type SQL, sql } from "drizzle-orm";
import { scimGroups, scimUserAttributes, users } from "../../../db/schema";
import type { Database } from "../../../platform/db";
import type { ServiceContext } from "../../../platform/service/context";
import type { MemberRow } from "../../members/present";
import { memberColumns, toMemberRow } from "../../members/queries";
import { ScimError } from "../errors";
import { listsEmail } from "../sql";
import type { ParsedFilter } from "./filter";
import { booleanOf, ENTERPRISE_USER_SCHEMA, type Json, type ScimCaller, USER_SCHEMA } from "./resources";

/** Reading SCIM Users: the institution's members with what `scim_user_attributes` keeps beside them. */

export type Attributes = typeof scimUserAttributes.$inferSelect;

export interface LoadedUser {
  member: MemberRow;
  attributes: Attributes | null;
}

export async function loadUsers(
  db: Database,
  institutionId: string,
  where: SQL | undefined,
  page?: { limit: number; offset: number },
): Promise<LoadedUser[]> {
  const query = db
    .select({ ...memberColumns, attributes: scimUserAttributes })
    .from(users)
    .leftJoin(
      scimUserAttributes,
      and(eq(scimUserAttributes.userId, users.id), eq(scimUserAttributes.institutionId, institutionId)),
    )
    .where(and(eq(users.institutionId, institutionId), where))
    .orderBy(asc(users.createdAt), asc(users.id));
  const rows = page ? await query.limit(page.limit).offset(page.offset).all() : await query.all();
  return rows.map(({ attributes, ...member }) => ({ member: toMemberRow(member), attributes }));
}

export async function loadUser(db: Database, institutionId: string, id: string): Promise<LoadedUser> {
  const [found] = await loadUsers(db, institutionId, eq(users.id, id));
  if (!found) throw new ScimError(404, `No User ${id}.`);
  return found;
}

/** The SCIM Groups among the members' groups: display name → id. */
async function groupIdsOf(db: Database, institutionId: string, loaded: LoadedUser[]) {
  const names = [...new Set(loaded.flatMap((l) => l.member.groups))];
  const ids = new Map<string, string>();
  for (let i = 0; i < names.length; i += 90) {
    const rows = await db
      .select({ id: scimGroups.id, displayName: scimGroups.displayName })
      .from(scimGroups)
      .where(
        and(
          eq(scimGroups.institutionId, institutionId),
          inArray(scimGroups.displayName, names.slice(i, i + 90)),
        ),
      )
      .all();
    for (const row of rows) ids.set(row.displayName, row.id);
  }
  return ids;
}

function userResource(loaded: LoadedUser, groupIds: Map<string, string>, base: string): Json {
  const { member, attributes } = loaded;
  const name: Json = { formatted: member.name };
  if (attributes?.givenName) name.givenName = attributes.givenName;
  if (attributes?.familyName) name.familyName = attributes.familyName;
  const resource: Json = {
    schemas: attributes?.department ? [USER_SCHEMA, ENTERPRISE_USER_SCHEMA] : [USER_SCHEMA],
    id: member.id,
    ...(member.externalId !== null ? { externalId: member.externalId } : {}),
    userName: member.email,
    name,
    displayName: member.name,
    emails: attributes?.emails ?? [{ value: member.email, type: "work", primary: true }],
    active: member.status !== "suspended",
    groups: member.groups
      .filter((g) => groupIds.has(g))
      .map((g) => ({ value: groupIds.get(g), display: g, $ref: `${base}/Groups/${groupIds.get(g)}` })),
  };
  if (attributes?.department) resource[ENTERPRISE_USER_SCHEMA] = { department: attributes.department };
  resource.meta = {
    resourceType: "User",
    created: member.createdAt,
    lastModified: member.updatedAt ?? member.createdAt,
    location: `${base}/Users/${member.id}`,
  };
  return resource;
}

export async function present(db: Database, caller: ScimCaller, loaded: LoadedUser[]): Promise<Json[]> {
  const groupIds = await groupIdsOf(db, caller.institutionId, loaded);
  return loaded.map((l) => userResource(l, groupIds, caller.base));
}

function filterWhere(institutionId: string, filter: ParsedFilter): SQL | undefined {
  const alternatives = filter.map((tests) =>
    and(
      ...tests.map((test): SQL => {
        const text = typeof test.value === "string" ? test.value : null;
        switch (test.attribute) {
          case "id":
            return eq(users.id, text ?? "");
          case "username":
            return eq(users.email, (text ?? "").toLowerCase());
          case "externalid":
            return eq(users.externalId, text ?? "");
          case "displayname":
            return eq(users.name, text ?? "");
          case "emails.value":
            return or(
              eq(users.email, (text ?? "").toLowerCase()),
              listsEmail(institutionId, text ?? ""),
            ) as SQL;
          case "active": {
            const active = booleanOf(test.value);
            if (active === "invalid" || active === undefined)
              throw new ScimError(400, "`active` is compared with true or false.", "invalidFilter");
            return active ? sql`${users.status} <> 'suspended'` : eq(users.status, "suspended");
          }
          default:
            throw new ScimError(400, `Filtering on ${test.attribute} is not supported.`, "invalidFilter");
        }
      }),
    ),
  );
  return alternatives.length === 0 ? undefined : or(...alternatives);
}

export async function listUsers(
  ctx: ServiceContext,
  caller: ScimCaller,
  input: { filter: ParsedFilter | null; startIndex: number; count: number },
) {
  const where = input.filter ? filterWhere(caller.institutionId, input.filter) : undefined;
  const totalRow = await ctx.db
    .select({ n: sql<number>`count(*)` })
    .from(users)
    .where(and(eq(users.institutionId, caller.institutionId), where))
    .get();
  const loaded =
    input.count === 0
      ? []
      : await loadUsers(ctx.db, caller.institutionId, where, {
          limit: input.count,
          offset: input.startIndex - 1,
        });
  return { total: totalRow?.n ?? 0, resources: await present(ctx.db, caller, loaded) };
}

export async function getUser(ctx: ServiceContext, caller: ScimCaller, id: string): Promise<Json> {
  const loaded = await loadUser(ctx.db, caller.institutionId, id);
  const [resource] = await present(ctx.db, caller, [loaded]);
  return resource as Json;
}
