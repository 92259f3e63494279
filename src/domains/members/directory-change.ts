import type { Writable } from "../../platform/service/commit";
import type { ServiceContext } from "../../platform/service/context";
import { type MemberChanges, normaliseGroups, sameGroups } from "./events";
import { writeMemberChange } from "./member-change";
import type { MemberRow } from "./present";

/**
 * A directory's change of a member (a SCIM PUT or PATCH of a User): what it changes, compared with
 * the member as read, written by member-change.ts only while the member is still as it was read
 * (`MemberChangedMeanwhile` otherwise, for the caller to read again and re-apply its request), so
 * two concurrent changes never lose one another's fields. Creating and removing: directory.ts.
 */

export interface DirectoryChange {
  email?: string;
  name?: string;
  externalId?: string | null;
  /** `active` and `invited` stay as they are unless `suspended` is asked; `active` reactivates a suspended member. */
  status?: "active" | "suspended";
  groups?: string[];
}

function directoryChanges(current: MemberRow, next: DirectoryChange): MemberChanges {
  const changes: MemberChanges = {};
  const email = next.email?.trim().toLowerCase();
  if (email !== undefined && email !== current.email) changes.email = { from: current.email, to: email };
  if (next.name !== undefined && next.name !== current.name)
    changes.name = { from: current.name, to: next.name };
  if (next.externalId !== undefined && next.externalId !== current.externalId)
    changes.external_id = { from: current.externalId, to: next.externalId };
  const status =
    next.status === "suspended"
      ? "suspended"
      : next.status === "active" && current.status === "suspended"
        ? "active"
        : current.status;
  if (status !== current.status) changes.status = { from: current.status, to: status };
  if (next.groups !== undefined) {
    const groups = normaliseGroups(next.groups);
    if (!sameGroups(groups, current.groups)) changes.groups = { from: current.groups, to: groups };
  }
  return changes;
}

/**
 * Changes a member as the directory says (member-change.ts writes it), if it is still `current`
 * (else `MemberChangedMeanwhile`). A suspension revokes every token of the member in the same batch
 * and tells their gates, so the next request with one is 401; suspending the last active admin is
 * refused (`last_admin`), and a reactivation needs a free seat. `extra` rides in the same batch (the
 * caller's own attributes).
 */
export async function changeDirectoryMember(
  ctx: ServiceContext,
  input: {
    institutionId: string;
    current: MemberRow;
    next: DirectoryChange;
    extra?: Writable[];
    /** The caller's own check that what it read still holds; `stale()` tells, after a failure, whether it broke. */
    guard?: { statement: Writable; stale: () => Promise<boolean> };
  },
): Promise<MemberRow> {
  const { institutionId, current, guard } = input;
  return writeMemberChange(ctx, {
    institutionId,
    current,
    changes: directoryChanges(current, input.next),
    ...(guard ? { guards: [guard.statement], stale: guard.stale } : {}),
    ...(input.extra ? { extra: input.extra } : {}),
  });
}
