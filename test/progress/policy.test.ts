import { describe, expect, it } from "vitest";
import type { Role } from "../../src/db/schema";
import { seesDrafts } from "../../src/domains/content/policy";
import {
  defaultLeaderboardScope,
  learnerScope,
  mayActFor,
  seesEveryLeaderboardName,
} from "../../src/domains/progress/policy";
import type { Ability } from "../../src/platform/auth/abilities";
import type { Principal } from "../../src/platform/auth/principal";

function principal(role: Role, institutionId: string | null = "ins_a", abilities: Ability[] = []): Principal {
  return {
    token: { id: "tok_1", kind: "api", name: "t", abilities, granted: abilities, expiresAt: null },
    user: { id: "usr_me", email: "me@example.test", name: "Me", role, timeZone: "UTC" },
    institution: institutionId ? { id: institutionId, slug: "a", name: "A", plan: "pro" } : null,
    rateLimitPerMinute: 1000,
  };
}

describe("progress policy: mayActFor", () => {
  it("lets anybody read and record their own progress", () => {
    for (const role of ["learner", "instructor", "institution_admin", "platform_admin"] as Role[]) {
      for (const purpose of ["read", "write"] as const) {
        expect(mayActFor(principal(role), { userId: undefined, purpose }).allowed).toBe(true);
        expect(mayActFor(principal(role), { userId: "usr_me", purpose }).allowed).toBe(true);
      }
    }
  });

  it("lets staff and institution admins read and record for others, instructors only read, learners neither", () => {
    const other = (role: Role, purpose: "read" | "write") =>
      mayActFor(principal(role), { userId: "usr_other", purpose });
    expect(other("platform_admin", "write").allowed).toBe(true);
    expect(other("institution_admin", "write").allowed).toBe(true);
    expect(other("instructor", "read").allowed).toBe(true);
    expect(other("instructor", "write")).toEqual({
      allowed: false,
      reason: "forbidden",
      detail: "A instructor may only record their own progress.",
    });
    expect(other("learner", "read")).toEqual({
      allowed: false,
      reason: "forbidden",
      detail: "A learner may only read their own progress.",
    });
  });
});

describe("progress policy: scopes and the leaderboard", () => {
  it("scopes the learners a principal may name to its institution, staff to everyone", () => {
    expect(learnerScope(principal("platform_admin", null))).toEqual({ everyone: true });
    expect(learnerScope(principal("institution_admin"))).toEqual({ institutionId: "ins_a" });
    expect(learnerScope(principal("instructor", null))).toEqual({ institutionId: null });
  });

  it("shows staff every name and the platform board by default; others their institution's board", () => {
    expect(seesEveryLeaderboardName(principal("platform_admin", null))).toBe(true);
    expect(seesEveryLeaderboardName(principal("institution_admin"))).toBe(false);
    expect(defaultLeaderboardScope(principal("platform_admin", null), { institutionId: "ins_a" })).toBe(
      "platform",
    );
    expect(defaultLeaderboardScope(principal("learner"), { institutionId: "ins_a" })).toBe("institution");
    expect(defaultLeaderboardScope(principal("learner", null), { institutionId: null })).toBe("platform");
  });
});

describe("content policy: seesDrafts", () => {
  it("shows drafts to a token holding content:write only", () => {
    expect(seesDrafts(principal("platform_admin", null, ["content:read", "content:write"]))).toBe(true);
    expect(seesDrafts(principal("platform_admin", null, ["content:read"]))).toBe(false);
    expect(seesDrafts(principal("institution_admin", "ins_a", ["content:read"]))).toBe(false);
  });
});
