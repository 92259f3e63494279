/**
 * The outbound gate's resolver check as deployed (wrangler.toml's OUTBOUND_DOH_URL, on by default)
 * and what a customer reads when a name does not resolve or the resolver fails. Every name here is
 * answered by the loopback DoH stub (test/helpers/receiver-doh-server.ts), never by a public
 * resolver; webhooks are registered disabled and nothing resolving inside is ever contacted.
 */
import { describe, expect, inject, it, vi } from "vitest";
import { callJson } from "../helpers/api";
import { dohStub, uniqueName } from "../helpers/receiver-doh";
import { createTenant, type Tenant } from "../helpers/tenants";

const doh = dohStub();
const shipped = inject("shippedVars");

/**
 * The deployed outbound settings of wrangler.toml, with its resolver (when it has one) replaced by the
 * loopback stub, which answers for the names below what a public resolver answers.
 */
const deployed: Partial<Cloudflare.Env> = {
  ALLOW_LOOPBACK_TARGETS: shipped.ALLOW_LOOPBACK_TARGETS ?? "false",
  OUTBOUND_DOH_URL:
    shipped.OUTBOUND_DOH_URL && shipped.OUTBOUND_DOH_URL !== "off"
      ? doh.resolverUrl
      : shipped.OUTBOUND_DOH_URL,
};

/** Public wildcard-DNS services whose names point at the address they spell, and one that is loopback. */
const INSIDE = [
  ["127.0.0.1.nip.io", "127.0.0.1", "a loopback address"],
  ["169.254.169.254.nip.io", "169.254.169.254", "a link-local or metadata address"],
  ["10.0.0.1.sslip.io", "10.0.0.1", "a private address"],
  ["localtest.me", "127.0.0.1", "a loopback address"],
] as const;

async function scriptInside() {
  await doh.script(Object.fromEntries(INSIDE.map(([name, address]) => [name, { A: [address] }])));
}

async function webhookCount(tenant: Tenant): Promise<number> {
  const list = await callJson("/api/integrations/webhooks", { token: tenant.admin.token });
  return list.body.meta.total;
}

describe("the deployed configuration resolves host names before saving them", () => {
  it.each(INSIDE)(
    "refuses a webhook at https://%s/ (resolving to %s): 422, nothing saved",
    async (name, _, what) => {
      await scriptInside();
      const tenant = await createTenant();
      const { res, body } = await callJson("/api/integrations/webhooks", {
        token: tenant.admin.token,
        body: { url: `https://${name}/hook`, events: ["*"], enabled: false },
        env: deployed,
      });
      expect(res.status).toBe(422);
      expect(body.code).toBe("validation_failed");
      expect(body.errors).toEqual([{ path: "url", message: `must not resolve to ${what}` }]);
      expect(await webhookCount(tenant)).toBe(0);
    },
  );

  it("refuses LTI platform URLs on such names: 422 naming each field, nothing saved", async () => {
    await scriptInside();
    const tenant = await createTenant();
    const outside = uniqueName("lms");
    await doh.script({ [outside]: { A: ["93.184.215.14"] } });
    const { res, body } = await callJson("/api/integrations/lti-consumers", {
      token: tenant.admin.token,
      body: {
        name: "LMS",
        issuer: `https://${outside}`,
        client_id: "c",
        deployment_ids: ["d"],
        auth_login_url: "https://127.0.0.1.nip.io/authorize",
        auth_token_url: "https://169.254.169.254.nip.io/token",
        jwks_url: "https://10.0.0.1.sslip.io/jwks",
      },
      env: deployed,
    });
    expect(res.status).toBe(422);
    expect(body.errors).toEqual([
      { path: "auth_login_url", message: "must not resolve to a loopback address" },
      { path: "auth_token_url", message: "must not resolve to a link-local or metadata address" },
      { path: "jwks_url", message: "must not resolve to a private address" },
    ]);
    const list = await callJson("/api/integrations/lti-consumers", { token: tenant.admin.token });
    expect(list.body.data).toEqual([]);
  });
});

describe("development's loopback switch does not turn the look-up off", () => {
  it("with ALLOW_LOOPBACK_TARGETS and a resolver, names answering private or metadata addresses stay refused", async () => {
    await scriptInside();
    const tenant = await createTenant();
    const register = (name: string) =>
      callJson("/api/integrations/webhooks", {
        token: tenant.admin.token,
        body: { url: `https://${name}/hook`, events: ["*"], enabled: false },
        env: { ALLOW_LOOPBACK_TARGETS: "true", OUTBOUND_DOH_URL: doh.resolverUrl },
      });
    for (const [name, , what] of INSIDE.filter(([, , what]) => what !== "a loopback address")) {
      const { res, body } = await register(name);
      expect(res.status, name).toBe(422);
      expect(body.errors).toEqual([{ path: "url", message: `must not resolve to ${what}` }]);
    }
    // Loopback answers are what development admits (registered disabled: nothing is sent).
    expect((await register("localtest.me")).res.status).toBe(201);
    expect(await webhookCount(tenant)).toBe(1);
  });
});

/** Everything `fn` wrote to console.error and console.warn, as parsed JSON lines. */
async function logged<T>(fn: () => Promise<T>): Promise<{ result: T; lines: any[] }> {
  const error = vi.spyOn(console, "error").mockImplementation(() => undefined);
  const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
  try {
    const result = await fn();
    const lines = [...error.mock.calls, ...warn.mock.calls].flatMap(([line]) => {
      try {
        return [JSON.parse(String(line))];
      } catch {
        return [];
      }
    });
    return { result, lines };
  } finally {
    error.mockRestore();
    warn.mockRestore();
  }
}

const withResolver = { ALLOW_LOOPBACK_TARGETS: "false", OUTBOUND_DOH_URL: doh.resolverUrl } as const;

/** Resolver failures, each with a word of its detail that must reach the log and not the customer. */
const FAILURES = [
  ["answers HTTP 500", { status: "http-500" }, "500"],
  ["answers a body that is not JSON", { status: "not-json" }, "JSON"],
  ["answers JSON of another shape", { status: "bad-shape" }, "Status"],
  ["answers SERVFAIL", { status: 2 }, "status 2"],
] as const;

describe("resolver failures reach customers as a category; the detail goes to the log", () => {
  it.each(FAILURES)("a ping whose resolver %s: dns, 'The resolver failed …'", async (_, records, detail) => {
    const tenant = await createTenant();
    const name = uniqueName("broken");
    await doh.script({ [name]: records });
    const created = await callJson("/api/integrations/webhooks", {
      token: tenant.admin.token,
      body: { url: `https://${name}/hook`, events: ["*"], enabled: false },
      env: withResolver,
    });
    // A name that cannot be checked now may be saved: every send checks it again.
    expect(created.res.status).toBe(201);
    const { result, lines } = await logged(() =>
      callJson(`/api/integrations/webhooks/${created.body.id}/test`, {
        token: tenant.admin.token,
        method: "POST",
        env: withResolver,
      }),
    );
    const ping = result.body;
    expect(ping).toMatchObject({
      status: "failed",
      last_response_status: null,
      last_error_code: "dns",
      last_error: "The resolver failed to look up the host name",
    });
    expect(ping.attempts).toEqual([
      expect.objectContaining({ error_code: "dns", error: "The resolver failed to look up the host name" }),
    ]);
    // Read back through the API: the stored text is the category alone.
    const log = await callJson(`/api/integrations/webhooks/${created.body.id}/deliveries/${ping.id}`, {
      token: tenant.admin.token,
    });
    expect(log.body.last_error).toBe("The resolver failed to look up the host name");
    expect(JSON.stringify(log.body)).not.toMatch(/zod|invalid_type|expected|HTTP 500|Status|resolver status/);
    const entry = lines.find((line) => line.message === "outbound resolver failed");
    expect(entry).toMatchObject({
      level: "error",
      code: "dns",
      reason: "resolver_failed",
      host: name,
      webhook_id: created.body.id,
      delivery_id: ping.id,
    });
    expect(entry.detail).toContain(detail);
  });

  it("a ping to a name without addresses: dns, 'The host name did not resolve'", async () => {
    const tenant = await createTenant();
    const name = uniqueName("missing");
    const created = await callJson("/api/integrations/webhooks", {
      token: tenant.admin.token,
      body: { url: `https://${name}/hook`, events: ["*"], enabled: false },
      env: withResolver,
    });
    expect(created.res.status).toBe(201);
    const ping = await callJson(`/api/integrations/webhooks/${created.body.id}/test`, {
      token: tenant.admin.token,
      method: "POST",
      env: withResolver,
    });
    expect(ping.body).toMatchObject({
      last_error_code: "dns",
      last_error: "The host name did not resolve",
    });
  });

  it("a name that resolves inside by the time of a ping: target_refused, the category without the address", async () => {
    const tenant = await createTenant();
    const name = uniqueName("rebound");
    await doh.script({ [name]: { A: ["93.184.215.14"], ttl: 0 } });
    const created = await callJson("/api/integrations/webhooks", {
      token: tenant.admin.token,
      body: { url: `https://${name}/hook`, events: ["*"], enabled: false },
      env: withResolver,
    });
    expect(created.res.status).toBe(201);
    await doh.script({ [name]: { A: ["192.168.0.10"], ttl: 0 } });
    const { result, lines } = await logged(() =>
      callJson(`/api/integrations/webhooks/${created.body.id}/test`, {
        token: tenant.admin.token,
        method: "POST",
        env: withResolver,
      }),
    );
    expect(result.body).toMatchObject({
      last_error_code: "target_refused",
      last_error: "Target refused: the URL must not resolve to a private address",
    });
    expect(JSON.stringify(result.body)).not.toContain("192.168.0.10");
    expect(lines.find((line) => line.message === "outbound host name refused")).toMatchObject({
      level: "warn",
      code: "target_refused",
      host: name,
      addresses: ["192.168.0.10"],
    });
  });

  it.each([
    ...FAILURES.map(
      ([what, records]) =>
        [`whose resolver ${what}`, records, "The resolver failed to look up the host name"] as const,
    ),
    ["without addresses", { status: 3 }, "The host name did not resolve"] as const,
  ])(
    "SSO discovery of an issuer %s: 422 naming the category, nothing saved",
    async (_, records, category) => {
      const tenant = await createTenant();
      const name = uniqueName("idp");
      await doh.script({ [name]: records });
      const issuer = `https://${name}/realms/acme`;
      const { res, body } = await callJson(`/api/institutions/${tenant.institution.id}/sso`, {
        method: "PUT",
        token: tenant.admin.token,
        body: { type: "oidc", oidc: { issuer, client_id: "c" } },
        env: withResolver,
      });
      expect(res.status).toBe(422);
      expect(body.errors).toEqual([
        {
          path: "oidc.issuer",
          message: `${issuer}/.well-known/openid-configuration could not be fetched (${category})`,
        },
      ]);
      const read = await callJson(`/api/institutions/${tenant.institution.id}/sso`, {
        token: tenant.admin.token,
      });
      expect(read.body.type).toBeNull();
    },
  );
});
