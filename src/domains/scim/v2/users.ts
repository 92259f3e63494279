import { and, eq, isNotNull, isNull } from "drizzle-orm";
import { scimUserAttributes, users } from "../../../db/schema";
import { batchGuard } from "../../../platform/batch";
import type { Database } from "../../../platform/db";
import { ApiError } from "../../../platform/errors";
import { nowIso } from "../../../platform/ids";
import type { ServiceContext } from "../../../platform/service/context";
import { createDirectoryMember, rejoinDirectoryMember } from "../../members/directory";
import { changeDirectoryMember } from "../../members/directory-change";
import { reapplyWhileMemberChanges, writeMemberRemoval } from "../../members/member-change";
import { ScimError } from "../errors";
import { attributesAsRead } from "../sql";
import { scimSettingsOf } from "../tokens";
import { applyPatch, patchOperations } from "./patch";
import type { Json, ScimCaller } from "./resources";
import { attributesRow, desiredOf, sameAttributes, upsertAttributes } from "./user-desired";
import { getUser, loadUser, present } from "./user-read";

/**
 * SCIM Users are the institution's members (RFC 7643 §4.1 onto members): `userName` is the e-mail,
 * `externalId` the member's `external_id`, `active` "not suspended", `name.formatted` and
 * `displayName` the member's name. What a member row has no column for (the name's parts, the
 * addresses as sent, the department) is kept in `scim_user_attributes`. Every write goes through the
 * members domain's directory services (members/directory.ts, members/directory-change.ts): the same
 * rows, guards and events as the members API.
 */

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
  return reapplyWhileMemberChanges(
    async () => {
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
    },
    () => {
      throw new ScimError(409, "The User kept changing while this request was applied; send it again.");
    },
  );
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
  await writeMemberRemoval(ctx, {
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
