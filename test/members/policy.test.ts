import { describe, expect, it } from "vitest";
import type { Role } from "../../src/db/schema";
import { invitationRolesShownTo, mayReissueBulkInvitations } from "../../src/domains/members/policy";
import type { Ability } from "../../src/platform/auth/abilities";
import { ALLOWED } from "../../src/platform/auth/policy";
import type { Principal } from "../../src/platform/auth/principal";

function principal(role: Role, abilities: Ability[]): Principal {
  return {
    token: { id: "tok_1", kind: "api", name: "t", abilities, granted: abilities, expiresAt: null },
    user: { id: "usr_1", email: "u@policy.test", name: "U", role, timeZone: "UTC" },
    institution: role === "platform_admin" ? null : { id: "ins_own", slug: "own", name: "Own", plan: "pro" },
    rateLimitPerMinute: 1000,
  };
}

describe("members policy: bulk invitations", () => {
  it("re-issues, and shows, the invitations of roles the caller could grant, with members:write only", () => {
    expect(invitationRolesShownTo(principal("institution_admin", ["members:write"]))).toEqual([
      "institution_admin",
      "instructor",
      "learner",
    ]);
    expect(invitationRolesShownTo(principal("platform_admin", ["members:write"]))).toHaveLength(3);
    // The role ceiling: a role above the caller's is left for somebody who may invite it.
    expect(invitationRolesShownTo(principal("instructor", ["members:write"]))).toEqual([
      "instructor",
      "learner",
    ]);
    expect(invitationRolesShownTo(principal("institution_admin", ["members:read"]))).toEqual([]);

    expect(mayReissueBulkInvitations(principal("institution_admin", ["members:write"]))).toEqual(ALLOWED);
    expect(mayReissueBulkInvitations(principal("institution_admin", ["members:read"]))).toMatchObject({
      allowed: false,
      reason: "forbidden",
    });
  });
});
