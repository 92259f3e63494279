import { memberGroups, users } from "../../db/schema";
import { DECOY_PASSWORD_HASH } from "../../platform/crypto/passwords";
import type { Database } from "../../platform/db";
import type { OutboxRow } from "../../platform/events";
import type { Writable } from "../../platform/service/commit";
import { memberCreated } from "./events";
import { type mintInvitation, upsertInvitation } from "./invitations";
import type { MemberRole } from "./policy";

export interface NewMember {
  email: string;
  name: string;
  role: MemberRole;
  externalId: string | null;
  groups: string[];
}

/** The rows of a new invited member: its user, its invitation and (if any) its groups. */
function newMemberRows(
  db: Database,
  input: {
    institutionId: string;
    member: NewMember & { id: string };
    invitation: Awaited<ReturnType<typeof mintInvitation>>;
    now: string;
  },
) {
  const { institutionId, member, invitation, now } = input;
  return {
    user: db.insert(users).values({
      id: member.id,
      email: member.email,
      name: member.name,
      role: member.role,
      institutionId,
      passwordHash: DECOY_PASSWORD_HASH,
      status: "invited",
      externalId: member.externalId,
      createdAt: now,
      updatedAt: now,
    }),
    invitation: upsertInvitation(db, { userId: member.id, institutionId, invitation, now }),
    groups:
      member.groups.length > 0
        ? [
            db
              .insert(memberGroups)
              .values(member.groups.map((groupName) => ({ institutionId, userId: member.id, groupName }))),
          ]
        : [],
    event: memberCreated(institutionId, { ...member, status: "invited" }, now),
  };
}

/**
 * The writes of a new invited member (its user row, invitation and groups) and its `member.created`
 * event, for `commit`. Part of members' face: institutions creates an institution's first admin
 * with it, in the institution's own batch.
 */
export function newMemberChange(
  db: Database,
  input: Parameters<typeof newMemberRows>[1],
): { statements: Writable[]; event: OutboxRow } {
  const rows = newMemberRows(db, input);
  return { statements: [rows.user, rows.invitation, ...rows.groups], event: rows.event };
}
