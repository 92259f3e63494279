import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  ALLOWED,
  allOf,
  type Decision,
  enforce,
  forbidden,
  holdsAbility,
  notFound,
} from "../../src/platform/auth/policy";
import type { Principal } from "../../src/platform/auth/principal";
import { ApiError } from "../../src/platform/errors";
import { createApiApp } from "../../src/platform/openapi";

function principal(abilities: Principal["token"]["abilities"]): Principal {
  return {
    token: { id: "tok_policy", kind: "api", name: "policy", abilities, granted: abilities, expiresAt: null },
    user: { id: "usr_policy", email: "p@example.test", name: "P", role: "instructor", timeZone: "UTC" },
    institution: { id: "ins_policy", slug: "policy", name: "Policy", plan: "pro" },
    rateLimitPerMinute: 1_000,
  };
}

function thrown(decision: Decision): unknown {
  try {
    enforce(decision);
  } catch (error) {
    return error;
  }
  return undefined;
}

const REFUSALS: { name: string; decision: Decision; status: number; code: string; detail: string }[] = [
  {
    name: "a missing ability",
    decision: holdsAbility(principal(["content:read"]), "members:write"),
    status: 403,
    code: "missing_ability",
    detail: "This token lacks the `members:write` ability.",
  },
  {
    name: "a forbidden action",
    decision: forbidden("Only an institution admin may do this."),
    status: 403,
    code: "forbidden",
    detail: "Only an institution admin may do this.",
  },
  {
    name: "another's resource",
    decision: notFound("No such webhook."),
    status: 404,
    code: "not_found",
    detail: "No such webhook.",
  },
];

describe("enforce", () => {
  it("lets an allowed decision through", () => {
    expect(thrown(ALLOWED)).toBeUndefined();
    expect(thrown(holdsAbility(principal(["content:read"]), "content:read"))).toBeUndefined();
  });

  for (const refusal of REFUSALS) {
    it(`answers ${refusal.name} as ${refusal.status} ${refusal.code}`, async () => {
      const error = thrown(refusal.decision);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ status: refusal.status, code: refusal.code, message: refusal.detail });

      // And on the wire, as the problem every other refusal is.
      const app = createApiApp((app) => {
        app.get("/api/policy-probe", () => {
          enforce(refusal.decision);
          throw new Error("unreachable");
        });
      });
      const res = await app.request("/api/policy-probe", {}, env);
      expect(res.status).toBe(refusal.status);
      expect(res.headers.get("Content-Type")).toBe("application/problem+json");
      expect(await res.json()).toMatchObject({
        status: refusal.status,
        code: refusal.code,
        detail: refusal.detail,
        request_id: res.headers.get("X-Request-Id"),
      });
    });
  }
});

describe("allOf", () => {
  it("is allowed when every decision is, and otherwise the first refusal", () => {
    expect(allOf()).toEqual(ALLOWED);
    expect(allOf(ALLOWED, ALLOWED)).toEqual(ALLOWED);
    const first = forbidden("first");
    expect(allOf(ALLOWED, first, notFound("second"))).toBe(first);
  });
});
