/**
 * The institution tests' helpers are the members' (members are below /api/institutions/{id}/): one
 * copy, in test/members/support.ts.
 */
export {
  acceptInvitation,
  addMember,
  allMembers,
  bulkPath,
  call,
  callJson,
  INSTITUTIONS,
  invitationToken,
  membersPath,
  outboxOf,
  setSeats,
  uniqueEmail,
  uploadCsv,
} from "../members/support";
