import type { Env } from "../../env";
import type { Principal } from "../../platform/auth/principal";
import { ApiError } from "../../platform/errors";
import { nowIso } from "../../platform/ids";
import { mayGrant, roleCeilingError } from "../institutions/access";
import { invitationUrl, mintInvitation, upsertInvitation } from "./invitations";
import { getMember } from "./service";

/** A new invitation for an invited member; the previous one stops working. */
export async function reinviteMember(args: {
  env: Env;
  principal: Principal;
  institutionId: string;
  memberId: string;
  origin: string;
}) {
  const { env, principal, institutionId } = args;
  const current = await getMember(env, principal, institutionId, args.memberId);
  if (!mayGrant(principal.user.role, current.role)) throw roleCeilingError(principal.user.role, current.role);
  if (current.status !== "invited") {
    throw new ApiError("conflict", `The member is ${current.status}; only invited members get invitations.`);
  }
  const invitation = await mintInvitation();
  await upsertInvitation(env, { userId: current.id, institutionId, invitation, now: nowIso() }).run();
  return {
    member: current,
    invitationUrl: invitationUrl(args.origin, invitation.token),
    invitationExpiresAt: invitation.expiresAt,
  };
}
