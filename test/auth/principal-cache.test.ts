import { env, runInDurableObject } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { institutions, type Role, users } from "../../src/db/schema";
import { invalidatePrincipals } from "../../src/platform/auth/invalidate";
import { hashToken } from "../../src/platform/auth/tokens";
import { database } from "../../src/platform/db";
import { callJson } from "../helpers/api";
import { createTenant, mintToken } from "../helpers/tenants";

async function me(token: string) {
  const { res, body } = await callJson("/api/auth/me", { token });
  expect(res.status).toBe(200);
  return body;
}

async function setRole(userId: string, role: Role) {
  await database(env.DB).update(users).set({ role }).where(eq(users.id, userId));
}

describe("the token gate's cached principal", () => {
  it("is re-read before answering once it is older than a minute: an idle token is never served its old role", async () => {
    const { learner } = await createTenant();
    expect((await me(learner.token)).user.role).toBe("learner");
    await setRole(learner.id, "instructor");
    // The token goes idle for two minutes: its gate's copy ages.
    const gate = env.TOKEN_GATE.get(env.TOKEN_GATE.idFromName(await hashToken(learner.token)));
    await runInDurableObject(gate, (instance) => {
      const cache = (instance as unknown as { cached: { loadedAt: number } }).cached;
      cache.loadedAt -= 120_000;
    });
    // The first request after the idle time already answers with the new role.
    const body = await me(learner.token);
    expect(body.user.role).toBe("instructor");
    expect(body.token.effective_abilities).toContain("members:read");
  });

  it("is dropped for every live token of a user by invalidatePrincipals({ userId })", async () => {
    const { admin, learner } = await createTenant();
    const api = await mintToken(learner, ["content:read", "progress:write"]);
    expect((await me(learner.token)).user.role).toBe("learner");
    expect((await me(api.token)).token.abilities).toEqual(["content:read", "progress:write"]);

    await setRole(learner.id, "instructor");
    // Cached: without an invalidation the change waits for the refresh.
    expect((await me(learner.token)).user.role).toBe("learner");
    const told = await invalidatePrincipals({ env, database: "DB" }, { userId: learner.id });
    expect(told).toBe(2);
    expect((await me(learner.token)).user.role).toBe("instructor");
    // The API token's abilities are cut to the new role's ceiling: instructors cannot record progress.
    expect((await me(api.token)).token.effective_abilities).toEqual(["content:read"]);
    // Another user's token is untouched.
    expect((await me(admin.token)).user.role).toBe("institution_admin");
  });

  it("is dropped for every member's tokens by invalidatePrincipals({ institutionId }) after a plan change", async () => {
    const { institution, admin, learner } = await createTenant({ plan: "free" });
    expect((await me(learner.token)).rate_limit.limit).toBe(100);
    await database(env.DB)
      .update(institutions)
      .set({ plan: "pro" })
      .where(eq(institutions.id, institution.id));
    expect((await me(learner.token)).plan).toBe("free");
    expect(await invalidatePrincipals({ env, database: "DB" }, { institutionId: institution.id })).toBe(3);
    for (const token of [learner.token, admin.token]) {
      const body = await me(token);
      expect(body.plan).toBe("pro");
      expect(body.rate_limit.limit).toBe(1000);
    }
  });

  it("is dropped for one token by invalidatePrincipals({ tokenId }), and never revives a revoked token", async () => {
    const { admin, learner } = await createTenant();
    await setRole(learner.id, "instructor");
    expect(await invalidatePrincipals({ env, database: "DB" }, { tokenId: learner.tokenId })).toBe(1);
    expect((await me(learner.token)).user.role).toBe("instructor");

    const revoked = await callJson(`/api/integrations/tokens/${admin.tokenId}`, {
      method: "DELETE",
      token: admin.token,
    });
    expect(revoked.res.status).toBe(204);
    // A revoked token is not live: nothing to tell, and its gate keeps refusing.
    expect(await invalidatePrincipals({ env, database: "DB" }, { tokenId: admin.tokenId })).toBe(0);
    const gate = env.TOKEN_GATE.get(env.TOKEN_GATE.idFromName(await hashToken(admin.token)));
    await gate.invalidate();
    expect((await callJson("/api/auth/me", { token: admin.token })).res.status).toBe(401);
  });
});
