import { enforce } from "../../platform/auth/policy";
import { batchGuard, isBatchGuardFailure } from "../../platform/batch";
import type { Database } from "../../platform/db";
import { ApiError } from "../../platform/errors";
import type { PageRequest } from "../../platform/http/pagination";
import { newId, nowIso } from "../../platform/ids";
import { commit } from "../../platform/service/commit";
import type { PrincipalContext } from "../../platform/service/context";
import { emailClaims } from "../../platform/service/directory";
import { emailDomain, enforcedSsoDomains } from "../institutions/sso/enforced";
import { type MemberChanges, normaliseGroups, sameGroups } from "./events";
import { invitationUrl, mintInvitation, upsertInvitation } from "./invitations";
import { reapplyWhileMemberChanges, writeMemberChange, writeMemberRemoval } from "./member-change";
import { type NewMember, newMemberChange } from "./new-member";
import { type MemberRole, mayChangeMember, mayGrantRole, mayReachMembersOf } from "./policy";
import type { MemberRow } from "./present";
import { findInstitution, findMember, listMemberRows, type MemberFilters, seatsAllow } from "./queries";
import { seatError, uniqueConflict } from "./rules";
import type { MemberSort } from "./schemas";

/**
 * The institution whose members (or bulk uploads) the caller asks for: 404 unless the caller reaches
 * its members (members/policy.ts) and it exists.
 */
export async function reachableInstitution(ctx: PrincipalContext, institutionId: string) {
  enforce(mayReachMembersOf(ctx.principal, institutionId));
  const institution = await findInstitution(ctx.db, institutionId);
  if (!institution) throw noInstitution(institutionId);
  return institution;
}

const noInstitution = (institutionId: string) =>
  new ApiError("not_found", `No institution ${institutionId}.`);

/** A page of members: the institution is read in the page's round trip (same answers as `reachableInstitution`). */
export async function listMembers(
  ctx: PrincipalContext,
  input: { institutionId: string; filters: MemberFilters; sort: MemberSort; page: PageRequest },
) {
  enforce(mayReachMembersOf(ctx.principal, input.institutionId));
  const listed = await listMemberRows(ctx.db, input.institutionId, input.filters, input.sort, input.page);
  if (!listed) throw noInstitution(input.institutionId);
  return listed;
}

export async function getMember(ctx: PrincipalContext, input: { institutionId: string; memberId: string }) {
  const institution = await reachableInstitution(ctx, input.institutionId);
  const member = await findMember(ctx.db, institution.id, input.memberId);
  if (!member) throw new ApiError("not_found", `No member ${input.memberId}.`);
  return member;
}

/** No invitation for an address whose domain the institution routes through enforced SSO: 409. */
async function refuseIfSsoEnforced(db: Database, institutionId: string, email: string): Promise<void> {
  const domain = emailDomain(email);
  if (!(await enforcedSsoDomains(db, institutionId)).has(domain)) return;
  throw new ApiError(
    "sso_enforced",
    `The institution enforces single sign-on for ${domain}: members there are created at their first sign-in through the identity provider, so no invitation is issued.`,
    { extensions: { domain } },
  );
}

/** Creates an invited member; the answer carries its single-use invitation URL. */
export async function createMember(
  ctx: PrincipalContext,
  input: { institutionId: string; member: NewMember; origin: string },
) {
  const institution = await reachableInstitution(ctx, input.institutionId);
  enforce(mayGrantRole(ctx.principal, input.member.role));
  await refuseIfSsoEnforced(ctx.db, institution.id, input.member.email);
  const member = {
    ...input.member,
    id: newId("usr"),
    email: input.member.email.trim().toLowerCase(),
    groups: normaliseGroups(input.member.groups),
  };
  const now = nowIso(ctx.now());
  const invitation = await mintInvitation(ctx.now(), institution.id);
  const { statements, event } = newMemberChange(ctx.db, {
    institutionId: institution.id,
    member,
    invitation,
    now,
  });
  try {
    await commit(ctx, {
      statements: [batchGuard(ctx.db, seatsAllow(institution.id, 1)), ...statements],
      events: [event],
      claims: emailClaims(institution.id, [member.email]),
    });
  } catch (error) {
    if (isBatchGuardFailure(error)) throw seatError();
    throw uniqueConflict(error) ?? error;
  }
  const row = await findMember(ctx.db, institution.id, member.id);
  if (!row) throw new Error("member vanished after insert");
  return {
    member: row,
    invitationUrl: invitationUrl(input.origin, invitation.token),
    invitationExpiresAt: invitation.expiresAt,
  };
}

export interface MemberPatch {
  name?: string;
  role?: MemberRole;
  status?: "active" | "suspended";
  external_id?: string | null;
  groups?: string[];
}

function changesOf(current: MemberRow, patch: MemberPatch): MemberChanges {
  const changes: MemberChanges = {};
  if (patch.name !== undefined && patch.name !== current.name)
    changes.name = { from: current.name, to: patch.name };
  if (patch.role !== undefined && patch.role !== current.role)
    changes.role = { from: current.role, to: patch.role };
  if (patch.status !== undefined && patch.status !== current.status)
    changes.status = { from: current.status, to: patch.status };
  if (patch.external_id !== undefined && patch.external_id !== current.externalId)
    changes.external_id = { from: current.externalId, to: patch.external_id };
  if (patch.groups !== undefined) {
    const groups = normaliseGroups(patch.groups);
    if (!sameGroups(groups, current.groups)) changes.groups = { from: current.groups, to: groups };
  }
  return changes;
}

/**
 * Changes a member (member-change.ts writes it): a role, name or e-mail change reaches the member's
 * sessions and tokens on their next request; a suspension revokes every one of them in the same batch.
 * Written only while the member is as read: when another request changed it in between, the member
 * is read (and the policy asked) again and the patch re-applied, so two PATCHes at once both land
 * and each `member.updated` says what the member was; one that keeps losing is `409 conflict`.
 */
export async function updateMember(
  ctx: PrincipalContext,
  input: { institutionId: string; memberId: string; patch: MemberPatch },
) {
  return reapplyWhileMemberChanges(
    async () => {
      const current = await getMember(ctx, input);
      enforce(mayChangeMember(ctx.principal, current, input.patch.role));
      return writeMemberChange(ctx, {
        institutionId: input.institutionId,
        current,
        changes: changesOf(current, input.patch),
      });
    },
    () => {
      throw new ApiError(
        "conflict",
        "The member kept changing while this change was applied; read it again and send the change again.",
      );
    },
  );
}

/** Removes a member from the institution (member-change.ts: history kept, tokens revoked at once). */
export async function removeMember(
  ctx: PrincipalContext,
  input: { institutionId: string; memberId: string },
): Promise<void> {
  const current = await getMember(ctx, input);
  enforce(mayChangeMember(ctx.principal, current));
  await writeMemberRemoval(ctx, { institutionId: input.institutionId, current });
}

/** A new invitation for an invited member; the previous one stops working. */
export async function reinviteMember(
  ctx: PrincipalContext,
  input: { institutionId: string; memberId: string; origin: string },
) {
  const current = await getMember(ctx, input);
  enforce(mayChangeMember(ctx.principal, current));
  if (current.status !== "invited") {
    throw new ApiError("conflict", `The member is ${current.status}; only invited members get invitations.`);
  }
  const invitation = await mintInvitation(ctx.now(), input.institutionId);
  await upsertInvitation(ctx.db, {
    userId: current.id,
    institutionId: input.institutionId,
    invitation,
    now: nowIso(ctx.now()),
  }).run();
  return {
    member: current,
    invitationUrl: invitationUrl(input.origin, invitation.token),
    invitationExpiresAt: invitation.expiresAt,
  };
}
