import { and, asc, eq, inArray, isNotNull, isNull, or, type SQL, sql } from "drizzle-orm";
import { scimGroups, scimUserAttributes, users } from "../../../db/schema";
import { batchGuard } from "../../../platform/batch";
import type { Database } from "../../../platform/db";
import { ApiError } from "../../../platform/errors";
import { nowIso } from "../../../platform/ids";
import type { ServiceContext } from "../../../platform/service/context";
import {
  changeDirectoryMember,
  createDirectoryMember,
  MemberChangedMeanwhile,
  rejoinDirectoryMember,
  removeDirectoryMember,
} from "../../members/directory";
import type { MemberRow } from "../../members/present";
import { memberColumns, toMemberRow } from "../../members/queries";
import { ScimError } from "../errors";
import { attributesAsRead, listsEmail } from "../sql";
import { scimSettingsOf } from "../tokens";
import type { ParsedFilter } from "./filter";
import { applyPatch, patchOperations } from "./patch";
import {
  attribute,
  booleanOf,
  ENTERPRISE_USER_SCHEMA,
  isObject,
  type Json,
  type ScimCaller,
  type ScimEmail,
  USER_SCHEMA,
} from "./resources";

/**
 * SCIM Users are the institution's members (RFC 7643 §4.1 onto members): `userName` is the e-mail,
 * `externalId` the member's `external_id`, `active` "not suspended", `name.formatted` and
 * `displayName` the member's name. What a member row has no column for (the name's parts, the
 * addresses as sent, the department) is kept in `scim_user_attributes`. Every write goes through the
 * members domain's directory services (members/directory.ts): the same rows, guards and events as
 * the members API.
 */

type Attributes = typeof scimUserAttributes.$inferSelect;

interface LoadedUser {
  member: MemberRow;
  attributes: Attributes | null;
}

/** How many times a write is re-applied when the member changed between its read and its write. */
const ATTEMPTS = 4;

async function loadUsers(
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

async function loadUser(db: Database, institutionId: string, id: string): Promise<LoadedUser> {
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

async function present(db: Database, caller: ScimCaller, loaded: LoadedUser[]): Promise<Json[]> {
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

/** What a User resource (as sent, or as a PATCH left it) asks the member to be. */
interface Desired {
  email: string;
  name: string;
  givenName: string | null;
  familyName: string | null;
  externalId: string | null;
  active: boolean;
  emails: ScimEmail[] | null;
  department: string | null;
}

function invalid(detail: string): ScimError {
  return new ScimError(400, detail, "invalidValue");
}

function optionalText(value: unknown, what: string, max: number): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") throw invalid(`${what} must be a string.`);
  const text = value.trim();
  if (text.length > max) throw invalid(`${what} is longer than ${max} characters.`);
  return text === "" ? null : text;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function emailsOf(value: unknown): ScimEmail[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value)) throw invalid("emails must be an array.");
  if (value.length > 10) throw invalid("A User has at most 10 emails.");
  return value.map((entry) => {
    if (!isObject(entry)) throw invalid("Each of emails is an object with a value.");
    const address = optionalText(attribute(entry, "value"), "emails.value", 254);
    if (!address || !EMAIL.test(address)) throw invalid("Each of emails has an e-mail address as its value.");
    const email: ScimEmail = { value: address };
    const type = optionalText(attribute(entry, "type"), "emails.type", 50);
    if (type) email.type = type;
    const primary = booleanOf(attribute(entry, "primary"));
    if (primary === "invalid") throw invalid("emails.primary must be true or false.");
    if (primary !== undefined) email.primary = primary;
    return email;
  });
}

/** The enterprise extension, sent as its own object or (PATCH without path, Entra) flattened into the resource. */
function departmentOf(resource: Json): string | null {
  const extension = attribute(resource, ENTERPRISE_USER_SCHEMA);
  if (isObject(extension)) return optionalText(attribute(extension, "department"), "department", 200);
  const flat = attribute(resource, `${ENTERPRISE_USER_SCHEMA}:department`);
  return optionalText(flat, "department", 200);
}

/**
 * The member's name from the resource. Given the resource as it was (`before`: a PUT or a PATCH), the
 * one of `name.formatted`, `displayName` or the given and family names that changed wins, so that a
 * client changing any one of them is heard; a new User takes the first it has, or the e-mail's local part.
 */
function nameOf(resource: Json, email: string, before?: Json): string {
  const name = attribute(resource, "name");
  const parts = isObject(name) ? name : {};
  const formatted = optionalText(attribute(parts, "formatted"), "name.formatted", 200);
  const display = optionalText(attribute(resource, "displayName"), "displayName", 200);
  const given = optionalText(attribute(parts, "givenName"), "name.givenName", 100);
  const family = optionalText(attribute(parts, "familyName"), "name.familyName", 100);
  const joined = [given, family].filter(Boolean).join(" ") || null;
  if (before) {
    const was = isObject(before.name) ? before.name : {};
    if (formatted && formatted !== was.formatted) return formatted;
    if (display && display !== before.displayName) return display;
    if (joined && (given !== (was.givenName ?? null) || family !== (was.familyName ?? null))) return joined;
    return String(was.formatted ?? before.displayName ?? email);
  }
  return formatted ?? display ?? joined ?? (email.split("@")[0] as string);
}

function desiredOf(resource: unknown, before?: Json): Desired {
  if (!isObject(resource)) throw new ScimError(400, "The body must be a SCIM User object.", "invalidSyntax");
  const userName = optionalText(attribute(resource, "userName"), "userName", 254);
  if (!userName) throw invalid("userName is required.");
  if (!EMAIL.test(userName))
    throw invalid("userName must be the person's e-mail address (map the IdP's e-mail or UPN to it).");
  const email = userName.toLowerCase();
  const active = booleanOf(attribute(resource, "active"));
  if (active === "invalid") throw invalid('active must be true or false (or "True"/"False").');
  const name = attribute(resource, "name");
  const parts = isObject(name) ? name : {};
  const emails = emailsOf(attribute(resource, "emails"));
  return {
    email,
    name: nameOf(resource, email, before),
    givenName: optionalText(attribute(parts, "givenName"), "name.givenName", 100),
    familyName: optionalText(attribute(parts, "familyName"), "name.familyName", 100),
    externalId: optionalText(attribute(resource, "externalId"), "externalId", 255),
    active: active ?? true,
    // The default (the member's e-mail as its one work address) is not stored.
    emails:
      emails &&
      !(emails.length === 1 && emails[0]?.value.toLowerCase() === email && emails[0]?.type === "work")
        ? emails
        : null,
    department: departmentOf(resource),
  };
}

function attributesRow(institutionId: string, userId: string, desired: Desired) {
  return {
    userId,
    institutionId,
    givenName: desired.givenName,
    familyName: desired.familyName,
    emails: desired.emails,
    department: desired.department,
    removedAt: null as string | null,
  };
}

function upsertAttributes(db: Database, row: ReturnType<typeof attributesRow>) {
  const { userId: _u, institutionId: _i, ...set } = row;
  return db
    .insert(scimUserAttributes)
    .values(row)
    .onConflictDoUpdate({ target: [scimUserAttributes.userId, scimUserAttributes.institutionId], set });
}

function sameAttributes(a: Attributes | null, b: ReturnType<typeof attributesRow>): boolean {
  const empty = !b.givenName && !b.familyName && !b.emails && !b.department;
  if (!a) return empty;
  return (
    a.removedAt === b.removedAt &&
    a.givenName === b.givenName &&
    a.familyName === b.familyName &&
    JSON.stringify(a.emails) === JSON.stringify(b.emails) &&
    a.department === b.department
  );
}

/** The member's groups once its department becomes one (when the institution maps departments to groups). */
function groupsWithDepartment(groups: string[], from: string | null, to: string | null): string[] {
  return [...groups.filter((g) => g !== from), ...(to ? [to] : [])];
}

/** A user of no institution whom this institution's directory removed (SCIM DELETE), by e-mail. */
async function removedHere(db: Database, institutionId: string, email: string): Promise<string | null> {
  const row = await db
    .select({ id: users.id })
    .from(users)
    .innerJoin(
      scimUserAttributes,
      and(
        eq(scimUserAttributes.userId, users.id),
        eq(scimUserAttributes.institutionId, institutionId),
        isNotNull(scimUserAttributes.removedAt),
      ),
    )
    .where(and(eq(users.email, email), isNull(users.institutionId)))
    .get();
  return row?.id ?? null;
}

/**
 * POST: a new member; or, when the e-mail belongs to a person this institution's directory deleted
 * earlier, that person again (Entra deletes users after their soft-delete period and provisions them
 * anew when they are assigned again). Any other e-mail in use is 409 `uniqueness`.
 */
export async function createUser(ctx: ServiceContext, caller: ScimCaller, body: unknown): Promise<Json> {
  const desired = desiredOf(body);
  const settings = await scimSettingsOf(ctx, caller.institutionId);
  const member = {
    email: desired.email,
    name: desired.name,
    externalId: desired.externalId,
    active: desired.active,
    groups: settings.departmentAsGroup && desired.department ? [desired.department] : [],
  };
  let id: string;
  try {
    const row = await createDirectoryMember(ctx, {
      institutionId: caller.institutionId,
      member,
      extra: (userId) => {
        const attributes = attributesRow(caller.institutionId, userId, desired);
        return sameAttributes(null, attributes) ? [] : [ctx.db.insert(scimUserAttributes).values(attributes)];
      },
    });
    id = row.id;
  } catch (error) {
    const removed =
      error instanceof ApiError && error.code === "email_taken"
        ? await removedHere(ctx.db, caller.institutionId, desired.email)
        : null;
    if (!removed) throw error;
    const row = await rejoinDirectoryMember(ctx, {
      institutionId: caller.institutionId,
      userId: removed,
      member,
      extra: [upsertAttributes(ctx.db, attributesRow(caller.institutionId, removed, desired))],
    });
    id = row.id;
  }
  return getUser(ctx, caller, id);
}

/**
 * Makes the member what `next(current)` says (a PUT's resource, or a PATCH applied to the current
 * one), re-reading and re-applying while another request changed the member in between.
 */
async function changeUser(
  ctx: ServiceContext,
  caller: ScimCaller,
  id: string,
  next: (current: Json) => unknown,
): Promise<Json> {
  const { db } = ctx;
  const settings = await scimSettingsOf(ctx, caller.institutionId);
  for (let attempt = 1; ; attempt++) {
    const loaded = await loadUser(db, caller.institutionId, id);
    const [current] = await present(db, caller, [loaded]);
    const desired = desiredOf(next(current as Json), current as Json);
    const { member, attributes } = loaded;
    const row = attributesRow(caller.institutionId, member.id, desired);
    const attributesChange = sameAttributes(attributes, row) ? [] : [upsertAttributes(db, row)];
    const readAttributes = attributes
      ? {
          givenName: attributes.givenName,
          familyName: attributes.familyName,
          emails: attributes.emails === null ? null : JSON.stringify(attributes.emails),
          department: attributes.department,
        }
      : null;
    const department = attributes?.department ?? null;
    try {
      await changeDirectoryMember(ctx, {
        institutionId: caller.institutionId,
        current: member,
        next: {
          email: desired.email,
          name: desired.name,
          externalId: desired.externalId,
          status: desired.active ? "active" : "suspended",
          ...(settings.departmentAsGroup && department !== desired.department
            ? { groups: groupsWithDepartment(member.groups, department, desired.department) }
            : {}),
        },
        extra: attributesChange,
        guard: {
          statement: batchGuard(db, attributesAsRead(caller.institutionId, member.id, readAttributes)),
          stale: async () => {
            const again = await loadUser(db, caller.institutionId, id);
            return JSON.stringify(again.attributes) !== JSON.stringify(attributes);
          },
        },
      });
      return getUser(ctx, caller, member.id);
    } catch (error) {
      if (error instanceof MemberChangedMeanwhile && attempt < ATTEMPTS) continue;
      if (error instanceof MemberChangedMeanwhile)
        throw new ScimError(409, "The User kept changing while this request was applied; send it again.");
      throw error;
    }
  }
}

/** PUT: the resource replaces the User (attributes left out are cleared; `active` left out is true). */
export function replaceUser(ctx: ServiceContext, caller: ScimCaller, id: string, body: unknown) {
  return changeUser(ctx, caller, id, () => body);
}

/** PATCH: the operations applied (scim-patch) to the User as it is now, then stored as a PUT would. */
export async function patchUser(ctx: ServiceContext, caller: ScimCaller, id: string, body: unknown) {
  patchOperations(body);
  return changeUser(ctx, caller, id, (current) => applyPatch(current, body));
}

/**
 * DELETE: the member leaves the institution, as the members API's DELETE does (learning history
 * kept, tokens revoked, groups and SCIM attributes gone; the institution remembers it removed the
 * user, so that its directory may provision the same person again). Okta's deactivate-then-delete
 * arrives as a suspension, then this.
 */
export async function deleteUser(ctx: ServiceContext, caller: ScimCaller, id: string): Promise<void> {
  const { member } = await loadUser(ctx.db, caller.institutionId, id);
  await removeDirectoryMember(ctx, {
    institutionId: caller.institutionId,
    current: member,
    extra: [
      // What is left: that this institution removed the user, so that its directory may add them again.
      upsertAttributes(ctx.db, {
        userId: member.id,
        institutionId: caller.institutionId,
        givenName: null,
        familyName: null,
        emails: null,
        department: null,
        removedAt: nowIso(ctx.now()),
      }),
    ],
  });
}
