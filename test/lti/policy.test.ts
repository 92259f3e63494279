import { describe, expect, it } from "vitest";
import { ltiInstitution, mayRotateKeys } from "../../src/domains/lti/policy";
import type { Principal } from "../../src/platform/auth/principal";

function principal(role: Principal["user"]["role"], institutionId: string | null): Principal {
  return {
    token: {
      id: "tok_1",
      kind: "api",
      name: "t",
      abilities: ["lti:read", "lti:write"],
      granted: ["lti:read", "lti:write"],
      expiresAt: null,
    },
    user: { id: "usr_1", email: "a@example.test", name: "A", role, timeZone: "UTC" },
    institution: institutionId ? { id: institutionId, slug: "x", name: "X", plan: "pro" } : null,
    rateLimitPerMinute: 1_000,
  };
}

describe("ltiInstitution", () => {
  it("is the caller's own institution, for every role", () => {
    expect(ltiInstitution(principal("institution_admin", "ins_a"))).toBe("ins_a");
    expect(ltiInstitution(principal("platform_admin", "ins_b"))).toBe("ins_b");
  });

  it("refuses an account of no institution (403 forbidden)", () => {
    expect(() => ltiInstitution(principal("platform_admin", null))).toThrow(
      expect.objectContaining({ code: "forbidden" }),
    );
  });
});

describe("mayRotateKeys", () => {
  const own = { institutionId: "ins_a" };
  const other = { institutionId: "ins_b" };

  it("lets an institution admin rotate its institution's registrations only; another's is not found", () => {
    const admin = principal("institution_admin", "ins_a");
    expect(mayRotateKeys(admin, own, "ltc_1")).toEqual({ allowed: true });
    expect(mayRotateKeys(admin, other, "ltc_2")).toEqual({
      allowed: false,
      reason: "not_found",
      detail: "No LTI registration ltc_2.",
    });
    expect(mayRotateKeys(admin, undefined, "ltc_3")).toMatchObject({ allowed: false, reason: "not_found" });
  });

  it("lets platform staff rotate any registration, with or without an institution; an unknown one is not found", () => {
    for (const staff of [principal("platform_admin", null), principal("platform_admin", "ins_a")]) {
      expect(mayRotateKeys(staff, other, "ltc_2")).toEqual({ allowed: true });
      expect(mayRotateKeys(staff, undefined, "ltc_3")).toMatchObject({ allowed: false, reason: "not_found" });
    }
  });

  it("refuses an account of no institution that is not platform staff (403), whatever the registration", () => {
    expect(() => mayRotateKeys(principal("institution_admin", null), own, "ltc_1")).toThrow(
      expect.objectContaining({ code: "forbidden" }),
    );
  });
});
