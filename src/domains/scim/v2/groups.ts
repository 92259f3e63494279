import { and, eq, sql } from "drizzle-orm";
import { scimGroups } from "../../../db/schema";
import { batchGuard, isBatchGuardFailure } from "../../../platform/batch";
import { ApiError } from "../../../platform/errors";
import { newId, nowIso } from "../../../platform/ids";
import type { Writable } from "../../../platform/service/commit";
import type { ServiceContext } from "../../../platform/service/context";
import { changeGroupMembers, groupMemberIds } from "../../members/directory-groups";
import { ScimError } from "../errors";
import { type GroupRow, getGroup, loadGroup } from "./group-read";
import { patchOperations } from "./patch";
import { attribute, isObject, type Json, type ScimCaller } from "./resources";

/**
 * SCIM Groups are the institution's member groups (the free-form names of `member_groups`), each
 * given a stable id and an optional `externalId` by a `scim_groups` row: a Group's members are the
 * members in the group of its display name. Creating a Group whose name members already have adopts
 * them; renaming it renames the group of each member; deleting it takes every member out. Every
 * membership change is one `commit` with a `member.updated` event per member whose groups changed
 * (members/directory-groups.ts).
 */

const ATTEMPTS = 4;

function invalid(detail: string): ScimError {
  return new ScimError(400, detail, "invalidValue");
}

function displayNameOf(value: unknown): string {
  if (typeof value !== "string" || value.trim() === "") throw invalid("displayName is required.");
  const name = value.trim();
  if (name.length > 100) throw invalid("displayName is longer than 100 characters.");
  return name;
}

function externalIdOf(value: unknown): string | null {
  if (value === undefined || value === null || value === "") return null;
  if (typeof value !== "string" || value.length > 255)
    throw invalid("externalId must be a string of at most 255 characters.");
  return value;
}

/** The user ids of a `members` value: `[{ "value": "usr_…" }, …]`. */
function memberIdsOf(value: unknown): string[] {
  const list = Array.isArray(value) ? value : value === undefined || value === null ? [] : [value];
  return list.map((entry) => {
    const id = isObject(entry) ? attribute(entry, "value") : entry;
    if (typeof id !== "string" || id === "")
      throw invalid('Each member is an object with a User id as "value".');
    return id;
  });
}

/** A write of the Group: unknown members are 400, a name or externalId in use 409 `uniqueness`. */
async function writeGroup(run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (error) {
    if (error instanceof ApiError && error.code === "not_found")
      throw new ScimError(
        400,
        `${error.message} Provision the User before adding it to a Group.`,
        "invalidValue",
      );
    const text = String(error instanceof Error ? `${error.message} ${String(error.cause ?? "")}` : error);
    if (/UNIQUE constraint failed: scim_groups\.institution_id, scim_groups\.display_name/.test(text))
      throw new ScimError(409, "Another Group of the institution has this displayName.", "uniqueness");
    if (/UNIQUE constraint failed: scim_groups\.institution_id, scim_groups\.external_id/.test(text))
      throw new ScimError(409, "Another Group of the institution has this externalId.", "uniqueness");
    throw error;
  }
}

export async function createGroup(ctx: ServiceContext, caller: ScimCaller, body: unknown): Promise<Json> {
  if (!isObject(body)) throw new ScimError(400, "The body must be a SCIM Group object.", "invalidSyntax");
  const displayName = displayNameOf(attribute(body, "displayName"));
  const externalId = externalIdOf(attribute(body, "externalId"));
  const add = memberIdsOf(attribute(body, "members"));
  const now = nowIso(ctx.now());
  const id = newId("grp");
  await writeGroup(() =>
    changeGroupMembers(ctx, {
      institutionId: caller.institutionId,
      groupName: displayName,
      add,
      extra: [
        ctx.db.insert(scimGroups).values({
          id,
          institutionId: caller.institutionId,
          displayName,
          externalId,
          createdAt: now,
          updatedAt: now,
        }),
      ],
    }),
  );
  return getGroup(ctx, caller, id);
}

interface GroupChange {
  displayName: string;
  externalId: string | null;
  add: string[];
  remove: string[];
}

/**
 * Applies `change(current group, its member ids)` under a guard that the group is still as read:
 * a concurrent rename or delete makes the write fail, and it is read and applied again.
 */
async function changeGroup(
  ctx: ServiceContext,
  caller: ScimCaller,
  id: string,
  change: (row: GroupRow, memberIds: string[]) => GroupChange,
): Promise<void> {
  const { db } = ctx;
  for (let attempt = 1; ; attempt++) {
    const row = await loadGroup(db, caller.institutionId, id);
    const memberIds = await groupMemberIds(db, caller.institutionId, row.displayName);
    const next = change(row, memberIds);
    const now = nowIso(ctx.now());
    const extra: Writable[] = [
      batchGuard(
        db,
        sql`EXISTS (SELECT 1 FROM ${scimGroups} WHERE ${and(eq(scimGroups.id, row.id), eq(scimGroups.displayName, row.displayName))})`,
      ),
      db
        .update(scimGroups)
        .set({ displayName: next.displayName, externalId: next.externalId, updatedAt: now })
        .where(eq(scimGroups.id, row.id)),
    ];
    try {
      await writeGroup(() =>
        changeGroupMembers(ctx, {
          institutionId: caller.institutionId,
          groupName: row.displayName,
          add: next.add,
          remove: next.remove,
          renameTo: next.displayName,
          extra,
        }),
      );
      return;
    } catch (error) {
      if (isBatchGuardFailure(error) && attempt < ATTEMPTS) continue;
      if (isBatchGuardFailure(error))
        throw new ScimError(409, "The Group kept changing while this request was applied; send it again.");
      throw error;
    }
  }
}

/** PUT: the Group becomes the resource (its members exactly those listed). */
export async function replaceGroup(ctx: ServiceContext, caller: ScimCaller, id: string, body: unknown) {
  if (!isObject(body)) throw new ScimError(400, "The body must be a SCIM Group object.", "invalidSyntax");
  const displayName = displayNameOf(attribute(body, "displayName"));
  const externalId = externalIdOf(attribute(body, "externalId"));
  const wanted = new Set(memberIdsOf(attribute(body, "members")));
  await changeGroup(ctx, caller, id, (_row, memberIds) => ({
    displayName,
    externalId,
    add: [...wanted].filter((m) => !memberIds.includes(m)),
    remove: memberIds.filter((m) => !wanted.has(m)),
  }));
  return getGroup(ctx, caller, id);
}

const MEMBER_FILTER = /^members\s*\[\s*value\s+eq\s+"([^"]+)"\s*\]$/i;

/**
 * PATCH of a Group: `members` added, removed (by value, by `members[value eq "…"]`, or all) or
 * replaced; `displayName` and `externalId` replaced; with or without `path` (Entra sends the
 * attributes in `value`). Membership is changed member by member, so two PATCHes adding different
 * members at once both hold.
 */
export async function patchGroup(ctx: ServiceContext, caller: ScimCaller, id: string, body: unknown) {
  const operations = patchOperations(body);
  await changeGroup(ctx, caller, id, (row, memberIds) => {
    let displayName = row.displayName;
    let externalId = row.externalId;
    const members = new Set(memberIds);
    const apply = (op: string, path: string, value: unknown) => {
      const key = path.toLowerCase();
      const filtered = MEMBER_FILTER.exec(path);
      if (filtered) {
        if (op !== "remove") throw new ScimError(400, `${op} cannot target ${path}.`, "invalidPath");
        members.delete(filtered[1] as string);
      } else if (key === "members") {
        if (op === "replace") members.clear();
        if (op === "remove" && value === undefined) members.clear();
        for (const member of memberIdsOf(value)) {
          if (op === "remove") members.delete(member);
          else members.add(member);
        }
      } else if (key === "displayname") {
        if (op === "remove") throw new ScimError(400, "displayName is required.", "mutability");
        displayName = displayNameOf(value);
      } else if (key === "externalid") {
        externalId = op === "remove" ? null : externalIdOf(value);
      } else if (key === "id" || key === "meta" || key === "schemas") {
        // Entra's PATCH without path may repeat `id`; read-only attributes are left as they are.
        if (key === "id" && value !== row.id) throw new ScimError(400, "id cannot be changed.", "mutability");
      } else {
        throw new ScimError(400, `A Group has no attribute ${path}.`, "invalidPath");
      }
    };
    for (const operation of operations) {
      if (operation.path) apply(operation.op, operation.path, operation.value);
      else if (isObject(operation.value))
        for (const [key, value] of Object.entries(operation.value)) apply(operation.op, key, value);
      else throw new ScimError(400, "An operation without path has an object as its value.", "invalidValue");
    }
    return {
      displayName,
      externalId,
      add: [...members].filter((m) => !memberIds.includes(m)),
      remove: memberIds.filter((m) => !members.has(m)),
    };
  });
}

/** DELETE: the Group goes, and every member leaves the group (the members themselves stay). */
export async function deleteGroup(ctx: ServiceContext, caller: ScimCaller, id: string): Promise<void> {
  const row = await loadGroup(ctx.db, caller.institutionId, id);
  await changeGroupMembers(ctx, {
    institutionId: caller.institutionId,
    groupName: row.displayName,
    dissolve: true,
    extra: [
      ctx.db
        .delete(scimGroups)
        .where(and(eq(scimGroups.id, row.id), eq(scimGroups.institutionId, caller.institutionId))),
    ],
  });
}
