import { env } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { institutions, type SsoType, ssoConnections, ssoDomains, ssoRequests } from "../../src/db/schema";
import { pendingRequestRows } from "../../src/domains/sso/sql";
import { database } from "../../src/platform/db";

// Each statement of src/domains/sso/sql.ts against D1.

const db = () => database(env.DB);
let sequence = 0;
const unique = (tag: string) => {
  sequence += 1;
  return `${tag}-sql-${sequence}-${crypto.randomUUID().slice(0, 8)}`;
};

/** An institution with a connection of `type` in `state` and one domain with `status`. */
async function seed(type: SsoType, state: "active" | "draft" | "inactive", status: "verified" | "pending") {
  const id = unique("ins");
  const domain = `${unique("d")}.example`;
  const now = "2026-01-01T00:00:00Z";
  await db().insert(institutions).values({ id, slug: id, name: id });
  await db().insert(ssoConnections).values({ institutionId: id, type, state, updatedAt: now });
  await db()
    .insert(ssoDomains)
    .values({ institutionId: id, domain, token: "t", status, createdAt: now, updatedAt: now });
  return { id, domain };
}

describe("pendingRequestRows", () => {
  const values = (state: string) => ({
    state,
    browserBindingHash: "hash",
    expiresAt: 1_000,
    createdAt: "2026-01-01T00:00:00Z",
    byProtocol: {
      oidc: { nonce: "oidc-nonce", codeVerifier: "verifier" },
      saml: { nonce: "_request-id", codeVerifier: null },
    },
  });
  const holderOf = (domain: string) =>
    db()
      .select({ id: ssoDomains.institutionId })
      .from(ssoDomains)
      .where(and(eq(ssoDomains.domain, domain), eq(ssoDomains.status, "verified")))
      .getSQL();
  const start = (state: string, institutionIds: ReturnType<typeof holderOf>) =>
    db()
      .insert(ssoRequests)
      .select(pendingRequestRows(values(state), institutionIds))
      .run();
  const stored = (state: string) => db().select().from(ssoRequests).where(eq(ssoRequests.state, state)).get();

  it("stores the request with the active connection's protocol and that protocol's nonce and verifier", async () => {
    const oidc = await seed("oidc", "active", "verified");
    const saml = await seed("saml", "active", "verified");
    const [a, b] = [unique("s"), unique("s")];
    await start(a, holderOf(oidc.domain));
    await start(b, holderOf(saml.domain));
    expect(await stored(a)).toEqual({
      state: a,
      institutionId: oidc.id,
      protocol: "oidc",
      browserBindingHash: "hash",
      nonce: "oidc-nonce",
      codeVerifier: "verifier",
      expiresAt: 1_000,
      usedAt: null,
      createdAt: "2026-01-01T00:00:00Z",
    });
    expect(await stored(b)).toMatchObject({
      institutionId: saml.id,
      protocol: "saml",
      nonce: "_request-id",
      codeVerifier: null,
    });
  });

  it("stores nothing for a connection not active, a domain not verified, or no institution", async () => {
    const draft = await seed("oidc", "draft", "verified");
    const inactive = await seed("saml", "inactive", "verified");
    const pending = await seed("oidc", "active", "pending");
    for (const domain of [draft.domain, inactive.domain, pending.domain, "nobody.example"]) {
      const state = unique("s");
      await start(state, holderOf(domain));
      expect(await stored(state)).toBeUndefined();
    }
  });

  it("takes the institution from any one-column subquery (a slug's)", async () => {
    const { id } = await seed("oidc", "active", "pending");
    const state = unique("s");
    await start(
      state,
      db().select({ id: institutions.id }).from(institutions).where(eq(institutions.slug, id)).getSQL(),
    );
    expect(await stored(state)).toMatchObject({ institutionId: id, protocol: "oidc" });
  });
});
