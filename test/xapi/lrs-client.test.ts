import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { xapiEndpoints } from "../../src/db/schema";
import { type EndpointRow, lrsRequest } from "../../src/domains/xapi/lrs-client";
import { database } from "../../src/platform/db";
import { callJson } from "../helpers/api";
import { testContext } from "../helpers/context";
import { receiverEndpoint } from "../helpers/receiver";
import { createTenant, type Tenant } from "../helpers/tenants";

// The LRS client called directly, as the delivery consumer calls it; endpoints made over HTTP and the
// LRS and token endpoint being the loopback receiver.

let t: Tenant;

beforeAll(async () => {
  t = await createTenant();
});

async function endpointRow(body: Record<string, unknown>): Promise<EndpointRow> {
  const { res, body: created } = await callJson("/api/integrations/xapi-endpoints", {
    token: t.admin.token,
    body: { name: "LRS", ...body },
  });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(created)}`);
  const row = await database(env.DB)
    .select()
    .from(xapiEndpoints)
    .where(eq(xapiEndpoints.id, created.id))
    .get();
  return row!;
}

describe("lrsRequest", () => {
  it("posts statements with the version header, JSON and Basic credentials", async () => {
    const lrs = receiverEndpoint();
    await lrs.configure({ script: [{ status: 200, body: '["a"]' }] });
    const row = await endpointRow({
      endpoint: `${lrs.url}/xapi`,
      version: "2.0.0",
      auth: { type: "basic", username: "ünïcode", password: "pässword" },
    });
    const result = await lrsRequest(testContext(), row, {
      method: "POST",
      path: "statements",
      body: '[{"id":"a"}]',
    });
    expect(result).toMatchObject({ ok: true, status: 200, stage: "lrs", bodyPrefix: '["a"]' });
    const [got] = await lrs.received();
    expect(got?.method).toBe("POST");
    expect(got?.body).toBe('[{"id":"a"}]');
    expect(got?.headers["content-type"]).toBe("application/json");
    expect(got?.headers["x-experience-api-version"]).toBe("2.0.0");
    const decoded = new TextDecoder().decode(
      Uint8Array.from(atob(got?.headers.authorization?.replace(/^Basic /, "") ?? ""), (c) => c.charCodeAt(0)),
    );
    expect(decoded).toBe("ünïcode:pässword");
  });

  it("answers a failed token request as stage token, without a status, never calling the LRS", async () => {
    const lrs = receiverEndpoint();
    const tokens = receiverEndpoint();
    await tokens.configure({ script: [{ status: 503, body: "down" }] });
    const row = await endpointRow({
      endpoint: `${lrs.url}/xapi/`,
      auth: {
        type: "oauth2",
        token_url: `${tokens.url}/token`,
        client_id: "c",
        client_secret: "s",
      },
    });
    const result = await lrsRequest(testContext(), row, { method: "POST", path: "statements", body: "[]" });
    expect(result).toMatchObject({
      ok: false,
      stage: "token",
      status: null,
      tokenStatus: 503,
      bodyPrefix: null,
      error: "Token request: HTTP 503",
    });
    expect(await lrs.received()).toEqual([]);
    // No scope configured: none is asked for.
    const [asked] = await tokens.received();
    expect(asked?.body).toBe("grant_type=client_credentials");
  });

  it("refuses a token answer without an access token or of another type", async () => {
    const lrs = receiverEndpoint();
    const tokens = receiverEndpoint();
    await tokens.configure({
      script: [
        { status: 200, body: JSON.stringify({ token_type: "Bearer" }) },
        { status: 200, body: JSON.stringify({ access_token: "x", token_type: "mac" }) },
      ],
    });
    const row = await endpointRow({
      endpoint: `${lrs.url}/xapi/`,
      auth: { type: "oauth2", token_url: `${tokens.url}/token`, client_id: "c", client_secret: "s" },
    });
    const ctx = testContext();
    const first = await lrsRequest(ctx, row, { method: "GET", path: "statements" });
    expect(first.error).toBe("Token request: the answer has no access_token");
    const second = await lrsRequest(ctx, row, { method: "GET", path: "statements" });
    expect(second.error).toBe('Token request: token_type "mac" is not Bearer');
    expect(await lrs.received()).toEqual([]);
  });

  it("judges the URL again before every request: a stored internal address is never called", async () => {
    const lrs = receiverEndpoint();
    const row = await endpointRow({
      endpoint: `${lrs.url}/xapi/`,
      auth: { type: "basic", username: "u", password: "p" },
    });
    const result = await lrsRequest(
      testContext(),
      { ...row, endpoint: "https://10.0.0.5/xapi/" },
      { method: "GET", path: "about" },
    );
    expect(result).toMatchObject({ ok: false, status: null, errorCode: "target_refused", stage: "lrs" });
  });
});
