import { describe, expect, it } from "vitest";
import type { Role } from "../../src/db/schema";
import {
  mayActOn,
  mayCreateInstitution,
  mayRecordCompliance,
  mayUpdateInstitution,
  mayVerifySsoDomain,
  visibleInstitutions,
} from "../../src/domains/institutions/policy";
import type { Ability } from "../../src/platform/auth/abilities";
import { ALLOWED } from "../../src/platform/auth/policy";
import type { Principal } from "../../src/platform/auth/principal";

function principal(
  role: Role,
  abilities: Ability[] = [],
  institutionId: string | null = "ins_own",
): Principal {
  return {
    token: { id: "tok_1", kind: "api", name: "t", abilities, granted: abilities, expiresAt: null },
    user: { id: "usr_1", email: "u@policy.test", name: "U", role, timeZone: "UTC" },
    institution:
      role === "platform_admin" || !institutionId
        ? null
        : { id: institutionId, slug: "own", name: "Own", plan: "pro" },
    rateLimitPerMinute: 1000,
  };
}

const own = { id: "ins_own" };
const other = { id: "ins_other" };
const staff = principal("platform_admin", ["members:write", "institutions:write"]);
const admin = principal("institution_admin", ["members:write"]);

describe("institutions policy", () => {
  it("lets staff act on every institution and anybody else on their own only, another's as not found", () => {
    expect(mayActOn(staff, other)).toEqual(ALLOWED);
    expect(mayActOn(admin, own)).toEqual(ALLOWED);
    expect(mayActOn(principal("learner"), own)).toEqual(ALLOWED);
    expect(mayActOn(admin, other)).toEqual({
      allowed: false,
      reason: "not_found",
      detail: "No institution ins_other.",
    });
    expect(mayActOn(principal("learner", [], null), own)).toMatchObject({ reason: "not_found" });
    expect(visibleInstitutions(staff)).toEqual({ all: true });
    expect(visibleInstitutions(admin)).toEqual({ all: false, id: "ins_own" });
  });

  it("keeps creation and compliance records to staff", () => {
    expect(mayCreateInstitution(staff)).toEqual(ALLOWED);
    expect(mayCreateInstitution(admin)).toMatchObject({ reason: "forbidden" });
    expect(mayRecordCompliance(staff, other)).toEqual(ALLOWED);
    expect(mayRecordCompliance(admin, own)).toMatchObject({ reason: "forbidden" });
    expect(mayRecordCompliance(admin, other)).toMatchObject({ reason: "not_found" });
  });

  it("lets admins change their settings, staff also plan, limit and seats with institutions:write", () => {
    expect(mayUpdateInstitution(admin, own, { plan: undefined })).toEqual(ALLOWED);
    expect(mayUpdateInstitution(admin, other, {})).toMatchObject({ reason: "not_found" });
    expect(mayUpdateInstitution(principal("instructor", ["members:write"]), own, {})).toMatchObject({
      reason: "forbidden",
      detail: "Only the institution's admins change its settings.",
    });
    expect(mayUpdateInstitution(admin, own, { plan: "enterprise", seats: null })).toEqual({
      allowed: false,
      reason: "forbidden",
      detail: "Only platform staff change `plan`, `seats`.",
    });
    expect(mayUpdateInstitution(staff, other, { rate_limit_per_minute: 5 })).toEqual(ALLOWED);
    expect(mayUpdateInstitution(principal("platform_admin", ["members:write"]), other, {})).toEqual(ALLOWED);
    expect(mayUpdateInstitution(principal("platform_admin", ["members:write"]), other, { seats: 3 })).toEqual(
      {
        allowed: false,
        reason: "missing_ability",
        ability: "institutions:write",
      },
    );
  });

  it("lets only staff verify a domain without DNS", () => {
    expect(mayVerifySsoDomain(admin, own, "dns")).toEqual(ALLOWED);
    expect(mayVerifySsoDomain(admin, own, "manual")).toMatchObject({ reason: "forbidden" });
    expect(mayVerifySsoDomain(admin, other, "dns")).toMatchObject({ reason: "not_found" });
    expect(mayVerifySsoDomain(staff, other, "manual")).toEqual(ALLOWED);
  });
});
