import { and, eq, inArray } from "drizzle-orm";
import { memberGroups, users } from "../../db/schema";
import { chunk, isBatchGuardFailure, rowsPerStatement } from "../../platform/batch";
import type { Database } from "../../platform/db";
import { ApiError } from "../../platform/errors";
import type { OutboxRow } from "../../platform/events";
import { nowIso } from "../../platform/ids";
import { commit, type Writable } from "../../platform/service/commit";
import type { ServiceContext } from "../../platform/service/context";
import { memberUpdated, normaliseGroups, sameGroups } from "./events";
import {
  type ComparedField,
  MemberChangedMeanwhile,
  membersUnchangedSince,
  reapplyWhileMemberChanges,
  sameMember,
} from "./member-change";
import type { MemberRow } from "./present";
import { memberColumns, toMemberRow } from "./queries";

/** A directory's groups (SCIM Groups): who is in a group, and changing that as one batch. */

export function groupInserts(
  db: Database,
  institutionId: string,
  groups: readonly string[],
  userIds: string[],
) {
  const rows = userIds.flatMap((userId) => groups.map((groupName) => ({ institutionId, userId, groupName })));
  return chunk(rows, rowsPerStatement(3)).map((part) =>
    db.insert(memberGroups).values(part).onConflictDoNothing(),
  );
}

/** The members among `userIds` of the institution, with their groups. */
export async function directoryMembers(
  db: Database,
  institutionId: string,
  userIds: readonly string[],
): Promise<MemberRow[]> {
  const rows: MemberRow[] = [];
  for (const part of chunk([...new Set(userIds)], 90)) {
    const found = await db
      .select(memberColumns)
      .from(users)
      .where(and(eq(users.institutionId, institutionId), inArray(users.id, part)))
      .all();
    rows.push(...found.map(toMemberRow));
  }
  return rows;
}

/** The ids of the institution's members in group `groupName`. */
export async function groupMemberIds(db: Database, institutionId: string, groupName: string) {
  const rows = await db
    .select({ userId: memberGroups.userId })
    .from(memberGroups)
    .where(and(eq(memberGroups.institutionId, institutionId), eq(memberGroups.groupName, groupName)))
    .all();
  return rows.map((r) => r.userId);
}

interface GroupMembersChange {
  institutionId: string;
  groupName: string;
  add?: readonly string[];
  remove?: readonly string[];
  /** Every member of the group is taken out (the group itself is deleted). */
  dissolve?: boolean;
  renameTo?: string;
  extra?: Writable[];
}

/**
 * Changes who is in group `groupName` (and, with `renameTo`, its name; with `dissolve`, takes every
 * member out): one batch, a `member.updated` event with the groups' change for each member whose
 * groups changed. Adding a member already in the group, or removing one who is not, changes nothing.
 * `extra` (the caller's own group row) rides in the same batch. Written only while the members whose
 * groups change have the groups they were read with (member-change.ts; a rename or new e-mail of a
 * member meanwhile does not stand in the way): when another change of one's groups landed in
 * between, the group and its members are read again and the change re-applied, so that each event's
 * `from` is what the member was; `409 conflict` after four lost races.
 */
export async function changeGroupMembers(ctx: ServiceContext, input: GroupMembersChange): Promise<void> {
  await reapplyWhileMemberChanges(
    () => changeGroupMembersAsRead(ctx, input),
    () => {
      throw new ApiError(
        "conflict",
        "The group's members kept changing while this change was applied; send it again.",
      );
    },
  );
}

/** What a group change depends on: the members' groups (and their being members). */
const GROUPS: readonly ComparedField[] = ["groups"];

/** Whether any of `members` is no longer as read (its groups changed, or no longer a member). */
async function anyChangedSince(db: Database, institutionId: string, members: readonly MemberRow[]) {
  const again = await directoryMembers(
    db,
    institutionId,
    members.map((m) => m.id),
  );
  const now = new Map(again.map((m) => [m.id, m]));
  return members.some((m) => {
    const read = now.get(m.id);
    return !read || !sameMember(read, m, GROUPS);
  });
}

async function changeGroupMembersAsRead(ctx: ServiceContext, input: GroupMembersChange): Promise<void> {
  const { db } = ctx;
  const { institutionId, groupName } = input;
  const inGroup = new Set(await groupMemberIds(db, institutionId, groupName));
  const removing = new Set(input.dissolve ? inGroup : (input.remove ?? []).filter((id) => inGroup.has(id)));
  const adding = new Set((input.add ?? []).filter((id) => !inGroup.has(id) && !removing.has(id)));
  const target = input.renameTo ?? groupName;
  const renaming = target !== groupName ? [...inGroup].filter((id) => !removing.has(id)) : [];
  const affected = await directoryMembers(db, institutionId, [...removing, ...adding, ...renaming]);
  const known = new Set(affected.map((m) => m.id));
  const unknown = [...adding].filter((id) => !known.has(id));
  if (unknown.length > 0) throw new ApiError("not_found", `No member ${unknown[0]} in this institution.`);

  const now = nowIso(ctx.now());
  const events: OutboxRow[] = [];
  const changing: MemberRow[] = [];
  for (const member of affected) {
    let groups = member.groups.filter((g) => g !== groupName);
    if (adding.has(member.id) || renaming.includes(member.id)) groups = [...groups, target];
    const to = normaliseGroups(groups);
    if (sameGroups(to, member.groups)) continue;
    changing.push(member);
    events.push(memberUpdated(institutionId, member.id, { groups: { from: member.groups, to } }, now));
  }
  const statements: Writable[] = [];
  for (const part of chunk([...removing, ...renaming], 90)) {
    statements.push(
      db
        .delete(memberGroups)
        .where(
          and(
            eq(memberGroups.institutionId, institutionId),
            eq(memberGroups.groupName, groupName),
            inArray(memberGroups.userId, part),
          ),
        ),
    );
  }
  statements.push(...groupInserts(db, institutionId, [target], [...adding, ...renaming]));
  statements.push(...(input.extra ?? []));
  if (statements.length === 0) return;
  try {
    await commit(ctx, {
      statements: [...membersUnchangedSince(db, institutionId, changing, GROUPS), ...statements],
      events,
    });
  } catch (error) {
    if (isBatchGuardFailure(error) && (await anyChangedSince(db, institutionId, changing)))
      throw new MemberChangedMeanwhile();
    throw error;
  }
}
