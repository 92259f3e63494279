import { env } from "cloudflare:test";
import { eq, inArray } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { xapiBatches, xapiEndpoints, xapiStatementKeys, xapiStatements } from "../../src/db/schema";
import type { createXapiEndpointRoute } from "../../src/domains/xapi/routes/create-endpoint";
import type { listXapiStatementsRoute } from "../../src/domains/xapi/routes/list-statements";
import type { testXapiEndpointRoute } from "../../src/domains/xapi/routes/test-endpoint";
import { database } from "../../src/platform/db";
import { type CallOptions, callJson, type ResponseBody } from "../helpers/api";
import { type ReceivedRequest, receiverEndpoint } from "../helpers/receiver";
import { createTenant, type Tenant } from "../helpers/tenants";
import { storeOwnStateStatements } from "./support";

// The endpoints' API over HTTP, as an integrator uses it; the LRS and its token endpoint are the
// loopback receiver (test/helpers/receiver-server.ts) answering what each test scripts.

type Endpoint = ResponseBody<typeof createXapiEndpointRoute, 201>;
type TestResult = ResponseBody<typeof testXapiEndpointRoute, 200>;
type LogPage = ResponseBody<typeof listXapiStatementsRoute, 200>;

const BASE_PATH = "/api/integrations/xapi-endpoints";
const ABOUT = JSON.stringify({ version: ["1.0.3", "1.0.2"] });
const NO_STATEMENTS = JSON.stringify({ statements: [], more: "" });
const db = () => database(env.DB);

/** Every answer's text, to prove no secret is ever in one. */
const answers: string[] = [];
const SECRETS = ["pw-first-secret", "pw-second-secret", "cs-first-secret", "cs-second-secret", "tok-"];

async function api<T = any>(t: Tenant, path: string, options: CallOptions = {}) {
  const result = await callJson<T>(path, { token: t.admin.token, ...options });
  answers.push(JSON.stringify(result.body ?? ""), [...result.res.headers].join("\n"));
  return result;
}

function basicBody(url: string, extra: Record<string, unknown> = {}) {
  return {
    name: "Learning Locker",
    endpoint: url,
    auth: { type: "basic", username: "lingua", password: "pw-first-secret" },
    ...extra,
  };
}

function oauthBody(url: string, tokenUrl: string, extra: Record<string, unknown> = {}) {
  return {
    name: "Watershed",
    endpoint: url,
    auth: {
      type: "oauth2",
      token_url: tokenUrl,
      client_id: "lingua-client",
      client_secret: "cs-first-secret",
      scope: "statements/write statements/read",
    },
    ...extra,
  };
}

async function create(t: Tenant, body: unknown): Promise<Endpoint> {
  const { res, body: created } = await api<Endpoint>(t, BASE_PATH, { body });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(created)}`);
  return created;
}

async function countEndpoints(t: Tenant): Promise<number> {
  const rows = await db()
    .select({ id: xapiEndpoints.id })
    .from(xapiEndpoints)
    .where(eq(xapiEndpoints.institutionId, t.institution.id));
  return rows.length;
}

/** An LRS on the receiver: `about`, then `statements` answer in the order the test call asks. */
function lrs() {
  const endpoint = receiverEndpoint();
  return {
    ...endpoint,
    base: `${endpoint.url}/xapi/`,
    async answer(statementsStatus = 200, extra: { status?: number; body?: string }[] = []) {
      await endpoint.configure({
        script: [
          { status: 200, body: ABOUT, headers: { "Content-Type": "application/json" } },
          { status: statementsStatus, body: NO_STATEMENTS, headers: { "Content-Type": "application/json" } },
          ...extra,
        ],
      });
    },
  };
}

function tokenServer() {
  const endpoint = receiverEndpoint();
  return {
    ...endpoint,
    url: `${endpoint.url}/oauth/token`,
    async issue(...tokens: (string | { status: number; body: string })[]) {
      await endpoint.configure({
        script: tokens.map((t) =>
          typeof t === "string"
            ? {
                status: 200,
                body: JSON.stringify({ access_token: t, token_type: "Bearer", expires_in: 3600 }),
                headers: { "Content-Type": "application/json" },
              }
            : { ...t, headers: { "Content-Type": "application/json" } },
        ),
        fallback: { status: 500, body: "unscripted" },
      });
    },
  };
}

const basic = (user: string, password: string) => `Basic ${btoa(`${user}:${password}`)}`;

let acme: Tenant;
let other: Tenant;

beforeAll(async () => {
  [acme, other] = await Promise.all([createTenant(), createTenant()]);
});

describe("creating, reading, listing", () => {
  it("registers an endpoint and answers it without its secret, with health", async () => {
    const url = lrs().base.replace(/\/$/, "");
    const { res, body } = await api<Endpoint>(acme, BASE_PATH, { body: basicBody(url) });
    expect(res.status).toBe(201);
    expect(res.headers.get("Location")).toMatch(new RegExp(`${BASE_PATH}/${body.id}$`));
    expect(body).toEqual({
      id: expect.stringMatching(/^xep_/),
      name: "Learning Locker",
      endpoint: `${url}/`,
      version: "1.0.3",
      auth: { type: "basic", username: "lingua", secret_set: true },
      activities: ["answered", "completed", "progressed", "mastered", "earned"],
      actor_format: "account",
      enabled: true,
      created_at: expect.any(String),
      updated_at: body.created_at,
      health: {
        sent_24h: 0,
        failed_24h: 0,
        pending: 0,
        last_success_at: null,
        last_error_at: null,
        last_error: null,
        failing_since: null,
      },
    });
    const read = await api<Endpoint>(acme, `${BASE_PATH}/${body.id}`);
    expect(read.res.status).toBe(200);
    expect(read.body).toEqual(body);
  });

  it("answers OAuth 2 credentials as token URL, client id and scope", async () => {
    const body = await create(
      acme,
      oauthBody(lrs().base, tokenServer().url, { version: "2.0.0", actor_format: "mbox", enabled: false }),
    );
    expect(body).toMatchObject({
      version: "2.0.0",
      actor_format: "mbox",
      enabled: false,
      auth: {
        type: "oauth2",
        token_url: expect.stringMatching(/\/oauth\/token$/),
        client_id: "lingua-client",
        scope: "statements/write statements/read",
        secret_set: true,
      },
    });
  });

  it("replays a creation sent twice with the same Idempotency-Key, creating one endpoint", async () => {
    const t = await createTenant();
    const headers = { "Idempotency-Key": crypto.randomUUID() };
    const body = basicBody(lrs().base);
    const first = await api<Endpoint>(t, BASE_PATH, { body, headers });
    const again = await api<Endpoint>(t, BASE_PATH, { body, headers });
    expect(first.res.status).toBe(201);
    expect(again.res.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    expect(await countEndpoints(t)).toBe(1);
  });

  it("lists newest first with each endpoint's health", async () => {
    const t = await createTenant();
    const first = await create(t, basicBody(lrs().base, { name: "first" }));
    const second = await create(t, basicBody(lrs().base, { name: "second" }));
    await db()
      .insert(xapiStatements)
      .values(
        (["sent", "sent", "failed", "pending"] as const).map((status) => ({
          id: crypto.randomUUID(),
          endpointId: first.id,
          verb: "answered" as const,
          activityId: "https://api.lingua.test/xapi/activities/training-items/x",
          userId: t.learner.id,
          occurredAt: "2026-11-20T10:00:00Z",
          status,
          createdAt: new Date().toISOString(),
          completedAt: status === "pending" ? null : new Date().toISOString(),
        })),
      );
    const { res, body } = await api(t, `${BASE_PATH}?per_page=1&page=2`);
    expect(res.status).toBe(200);
    expect(body.meta).toEqual({ total: 2, per_page: 1, current_page: 2, last_page: 2 });
    expect(body.data.map((e: Endpoint) => e.id)).toEqual([first.id]);
    expect(body.data[0].health).toMatchObject({ sent_24h: 2, failed_24h: 1, pending: 1 });
    const all = await api(t, BASE_PATH);
    expect(all.body.data.map((e: Endpoint) => [e.id, e.health.sent_24h])).toEqual([
      [second.id, 0],
      [first.id, 2],
    ]);
  });
});

describe("validation", () => {
  const cases: [string, (url: string) => unknown, string][] = [
    ["a URL that is not one", () => basicBody("not a url"), "endpoint"],
    ["plain http off loopback", () => basicBody("http://lrs.example.com/xapi/"), "endpoint"],
    ["a private address", () => basicBody("https://10.1.2.3/xapi/"), "endpoint"],
    ["a metadata address", () => basicBody("https://169.254.169.254/xapi/"), "endpoint"],
    ["a query string", (url) => basicBody(`${url}?tenant=1`), "endpoint"],
    ["credentials in the URL", () => basicBody("https://u:p@lrs.example.com/xapi/"), "endpoint"],
    ["an unknown version", (url) => basicBody(url, { version: "1.0.0" }), "version"],
    ["an unknown activity", (url) => basicBody(url, { activities: ["watched"] }), "activities.0"],
    ["no activity", (url) => basicBody(url, { activities: [] }), "activities"],
    ["an activity twice", (url) => basicBody(url, { activities: ["answered", "answered"] }), "activities"],
    ["an unknown actor format", (url) => basicBody(url, { actor_format: "openid" }), "actor_format"],
    [
      "a missing password",
      (url) => ({ ...basicBody(url), auth: { type: "basic", username: "lingua" } }),
      "auth.password",
    ],
    [
      "a colon in the user name",
      (url) => ({ ...basicBody(url), auth: { type: "basic", username: "a:b", password: "x" } }),
      "auth.username",
    ],
    [
      "a missing client secret",
      (url) => {
        const body = oauthBody(url, "https://auth.example.com/token");
        return { ...body, auth: { ...body.auth, client_secret: undefined } };
      },
      "auth.client_secret",
    ],
    ["a private token URL", (url) => oauthBody(url, "https://192.168.0.10/token"), "auth.token_url"],
    ["an unknown auth type", (url) => ({ ...basicBody(url), auth: { type: "digest" } }), "auth.type"],
    ["an unknown field", (url) => basicBody(url, { secret: "x" }), ""],
  ];
  for (const [what, body, path] of cases) {
    it(`refuses ${what} with a 422 naming ${path || "the field"}, storing nothing`, async () => {
      const t = await createTenant();
      const { res, body: problem } = await api(t, BASE_PATH, { body: body(lrs().base) });
      expect(res.status).toBe(422);
      expect(res.headers.get("Content-Type")).toMatch(/application\/problem\+json/);
      expect(problem.code).toBe("validation_failed");
      if (path) expect(problem.errors.map((e: { path: string }) => e.path)).toContain(path);
      expect(await countEndpoints(t)).toBe(0);
    });
  }

  it("refuses an 11th endpoint with 409", async () => {
    const t = await createTenant();
    for (let i = 0; i < 10; i++) await create(t, basicBody(lrs().base, { name: `lrs ${i}` }));
    const { res, body } = await api(t, BASE_PATH, { body: basicBody(lrs().base) });
    expect(res.status).toBe(409);
    expect(body.code).toBe("conflict");
    expect(await countEndpoints(t)).toBe(10);
  });
});

describe("PUT: a full replacement", () => {
  // An institution of its own per group: at most 10 endpoints each.
  beforeAll(async () => {
    acme = await createTenant();
  });

  it("resets what is left out to its default and keeps the secret for the same identity", async () => {
    const target = lrs();
    const created = await create(
      acme,
      basicBody(target.base, { version: "2.0.0", activities: ["answered"], enabled: false }),
    );
    const { res, body } = await api<Endpoint>(acme, `${BASE_PATH}/${created.id}`, {
      method: "PUT",
      body: { name: "Renamed", endpoint: target.base, auth: { type: "basic", username: "lingua" } },
    });
    expect(res.status).toBe(200);
    expect(body).toMatchObject({
      name: "Renamed",
      version: "1.0.3",
      activities: ["answered", "completed", "progressed", "mastered", "earned"],
      enabled: true,
      auth: { type: "basic", username: "lingua", secret_set: true },
    });
    // The kept secret still opens: the LRS receives the first password.
    await target.answer();
    await api(acme, `${BASE_PATH}/${created.id}/test`, { method: "POST" });
    const [, statements] = await target.received();
    expect(statements?.headers.authorization).toBe(basic("lingua", "pw-first-secret"));
  });

  it("requires the secret when the identity or the type changes, changing nothing", async () => {
    const created = await create(acme, basicBody(lrs().base));
    const before = await db().select().from(xapiEndpoints).where(eq(xapiEndpoints.id, created.id)).get();
    const attempts = [
      { auth: { type: "basic", username: "someone-else" } },
      { auth: { type: "oauth2", token_url: "https://auth.example.com/token", client_id: "x" } },
    ];
    for (const change of attempts) {
      const { res, body } = await api(acme, `${BASE_PATH}/${created.id}`, {
        method: "PUT",
        body: { ...basicBody(created.endpoint), ...change },
      });
      expect(res.status).toBe(422);
      expect(body.errors[0].path).toMatch(/^auth\.(password|client_secret)$/);
    }
    const after = await db().select().from(xapiEndpoints).where(eq(xapiEndpoints.id, created.id)).get();
    expect(after).toEqual(before);
  });

  it("refuses a bad URL with 422 and keeps the stored one", async () => {
    const created = await create(acme, basicBody(lrs().base));
    const { res } = await api(acme, `${BASE_PATH}/${created.id}`, {
      method: "PUT",
      body: basicBody("https://127.0.0.1.nip.io.internal/xapi/"),
    });
    expect(res.status).toBe(422);
    expect((await api<Endpoint>(acme, `${BASE_PATH}/${created.id}`)).body.endpoint).toBe(created.endpoint);
  });

  it("applies new Basic credentials to the very next request", async () => {
    const target = lrs();
    const created = await create(acme, basicBody(target.base));
    await target.answer();
    await api(acme, `${BASE_PATH}/${created.id}/test`, { method: "POST" });
    await api(acme, `${BASE_PATH}/${created.id}`, {
      method: "PUT",
      body: basicBody(target.base, {
        auth: { type: "basic", username: "lingua-2", password: "pw-second-secret" },
      }),
    });
    await target.answer();
    await api(acme, `${BASE_PATH}/${created.id}/test`, { method: "POST" });
    const [, statements] = await target.received();
    expect(statements?.headers.authorization).toBe(basic("lingua-2", "pw-second-secret"));
  });
});

describe("the test call", () => {
  // An institution of its own per group: at most 10 endpoints each.
  beforeAll(async () => {
    acme = await createTenant();
  });

  it("reports versions and accepted Basic credentials, about sent without them", async () => {
    const target = lrs();
    const created = await create(acme, basicBody(target.base));
    await target.answer();
    const { res, body } = await api<TestResult>(acme, `${BASE_PATH}/${created.id}/test`, { method: "POST" });
    expect(res.status).toBe(200);
    expect(body).toEqual({
      reachable: true,
      versions: ["1.0.3", "1.0.2"],
      version_supported: true,
      credentials_accepted: true,
      about: { status: 200, duration_ms: expect.any(Number), error: null },
      statements: { status: 200, duration_ms: expect.any(Number), error: null },
    });
    const [about, statements] = (await target.received()) as [ReceivedRequest, ReceivedRequest];
    expect(about.method).toBe("GET");
    expect(about.headers.authorization).toBeUndefined();
    expect(about.headers["x-experience-api-version"]).toBe("1.0.3");
    expect(statements.headers.authorization).toBe(basic("lingua", "pw-first-secret"));
    expect(statements.headers["x-experience-api-version"]).toBe("1.0.3");
  });

  it("says the credentials were refused, and an unsupported version", async () => {
    const target = lrs();
    const created = await create(acme, basicBody(target.base, { version: "2.0.0" }));
    await target.answer(401);
    const { body } = await api<TestResult>(acme, `${BASE_PATH}/${created.id}/test`, { method: "POST" });
    expect(body).toMatchObject({
      reachable: true,
      version_supported: false,
      credentials_accepted: false,
      statements: { status: 401, error: "HTTP 401" },
    });
  });

  it("answers 200 describing an LRS that does not answer", async () => {
    const created = await create(acme, basicBody("http://127.0.0.1:9/xapi/"));
    const { res, body } = await api<TestResult>(acme, `${BASE_PATH}/${created.id}/test`, { method: "POST" });
    expect(res.status).toBe(200);
    expect(body).toMatchObject({
      reachable: false,
      versions: null,
      version_supported: null,
      credentials_accepted: null,
      about: { status: null },
      statements: { status: null },
    });
    expect(body.about.error).toBeTruthy();
  });

  it("gets an OAuth 2 token by client_secret_basic, caches it, and renews it when the credentials change", async () => {
    const target = lrs();
    const tokens = tokenServer();
    const created = await create(acme, oauthBody(target.base, tokens.url));
    await tokens.issue("tok-one", "tok-two");

    await target.answer();
    const first = await api<TestResult>(acme, `${BASE_PATH}/${created.id}/test`, { method: "POST" });
    expect(first.body.credentials_accepted).toBe(true);
    await target.answer();
    await api(acme, `${BASE_PATH}/${created.id}/test`, { method: "POST" });
    let asked = await tokens.received();
    expect(asked).toHaveLength(1);
    expect(asked[0]?.method).toBe("POST");
    expect(asked[0]?.headers.authorization).toBe(basic("lingua-client", "cs-first-secret"));
    expect(asked[0]?.headers["content-type"]).toMatch(/^application\/x-www-form-urlencoded/);
    expect(Object.fromEntries(new URLSearchParams(asked[0]?.body))).toEqual({
      grant_type: "client_credentials",
      scope: "statements/write statements/read",
    });
    const [, statements] = await target.received();
    expect(statements?.headers.authorization).toBe("Bearer tok-one");

    // New credentials: the cached token of the old ones is never used again.
    const body = oauthBody(target.base, tokens.url);
    await api(acme, `${BASE_PATH}/${created.id}`, {
      method: "PUT",
      body: { ...body, auth: { ...body.auth, client_secret: "cs-second-secret" } },
    });
    await target.answer();
    await api(acme, `${BASE_PATH}/${created.id}/test`, { method: "POST" });
    asked = await tokens.received();
    expect(asked).toHaveLength(2);
    expect(asked[1]?.headers.authorization).toBe(basic("lingua-client", "cs-second-secret"));
    const [, renewed] = await target.received();
    expect(renewed?.headers.authorization).toBe("Bearer tok-two");
  });

  it("forgets a cached token the LRS refuses and tries once more with a new one", async () => {
    const target = lrs();
    const tokens = tokenServer();
    const created = await create(acme, oauthBody(target.base, tokens.url));
    await tokens.issue("tok-old", "tok-new");
    await target.answer();
    await api(acme, `${BASE_PATH}/${created.id}/test`, { method: "POST" });
    await target.answer(401, [{ status: 200, body: NO_STATEMENTS }]);
    const { body } = await api<TestResult>(acme, `${BASE_PATH}/${created.id}/test`, { method: "POST" });
    expect(body.credentials_accepted).toBe(true);
    const [, refused, retried] = await target.received();
    expect(refused?.headers.authorization).toBe("Bearer tok-old");
    expect(retried?.headers.authorization).toBe("Bearer tok-new");
    expect(await tokens.received()).toHaveLength(2);
  });

  it("reports a refused token request as the token request's, without calling statements", async () => {
    const target = lrs();
    const tokens = tokenServer();
    const created = await create(acme, oauthBody(target.base, tokens.url));
    await tokens.issue({ status: 401, body: JSON.stringify({ error: "invalid_client" }) });
    await target.answer();
    const { body } = await api<TestResult>(acme, `${BASE_PATH}/${created.id}/test`, { method: "POST" });
    expect(body).toMatchObject({
      reachable: true,
      credentials_accepted: false,
      statements: { status: null, error: "Token request: HTTP 401 (invalid_client)" },
    });
    expect(await target.received()).toHaveLength(1);
  });
});

describe("the forwarding log", () => {
  // An institution of its own per group: at most 10 endpoints each.
  beforeAll(async () => {
    acme = await createTenant();
  });

  it("lists statements newest first, filtered by status and verb", async () => {
    const created = await create(acme, basicBody(lrs().base));
    const rows = [
      ["answered", "sent", "2026-11-20T10:00:01Z"],
      ["completed", "failed", "2026-11-20T10:00:02Z"],
      ["answered", "pending", "2026-11-20T10:00:03Z"],
    ] as const;
    const ids = rows.map(() => crypto.randomUUID());
    await storeOwnStateStatements(
      rows.map(([verb, status, createdAt], i) => ({
        id: ids[i]!,
        endpointId: created.id,
        verb,
        activityId: `https://api.lingua.test/xapi/activities/lessons/l${i}`,
        userId: acme.learner.id,
        occurredAt: "2026-11-20T09:59:00Z",
        status,
        attempts: status === "pending" ? 0 : 2,
        lastError: status === "failed" ? "HTTP 400: bad statement" : null,
        sentAt: status === "sent" ? createdAt : null,
        createdAt,
        completedAt: status === "pending" ? null : createdAt,
      })),
    );
    const all = await api<LogPage>(acme, `${BASE_PATH}/${created.id}/statements`);
    expect(all.res.status).toBe(200);
    expect(all.body.data.map((s) => s.id)).toEqual([ids[2], ids[1], ids[0]]);
    expect(all.body.data[1]).toEqual({
      id: ids[1],
      verb: "completed",
      activity: "https://api.lingua.test/xapi/activities/lessons/l1",
      user_id: acme.learner.id,
      occurred_at: "2026-11-20T09:59:00Z",
      status: "failed",
      attempts: 2,
      last_error: "HTTP 400: bad statement",
      sent_at: null,
      created_at: "2026-11-20T10:00:02Z",
    });
    expect(all.body.meta.total).toBe(3);
    const answered = await api<LogPage>(acme, `${BASE_PATH}/${created.id}/statements?verb=answered`);
    expect(answered.body.data.map((s) => s.id)).toEqual([ids[2], ids[0]]);
    expect(answered.body.meta.total).toBe(2);
    const sent = await api<LogPage>(acme, `${BASE_PATH}/${created.id}/statements?status=sent&verb=answered`);
    expect(sent.body.data.map((s) => s.id)).toEqual([ids[0]]);
    expect(sent.body.meta.total).toBe(1);
    const failed = await api<LogPage>(acme, `${BASE_PATH}/${created.id}/statements?status=failed`);
    expect([failed.body.data.map((s) => s.id), failed.body.meta.total]).toEqual([[ids[1]], 1]);
    const second = await api<LogPage>(acme, `${BASE_PATH}/${created.id}/statements?per_page=2&page=2`);
    expect(second.body.data.map((s) => s.id)).toEqual([ids[0]]);
    const bad = await api(acme, `${BASE_PATH}/${created.id}/statements?status=lost`);
    expect(bad.res.status).toBe(422);
  });
});

describe("deleting", () => {
  // An institution of its own per group: at most 10 endpoints each.
  beforeAll(async () => {
    acme = await createTenant();
  });

  it("answers 204 and takes its batches, statements and statement keys with it", async () => {
    const created = await create(acme, basicBody(lrs().base));
    const other = await create(acme, basicBody(lrs().base));
    const now = new Date().toISOString();
    const statement = (endpointId: string) => ({
      id: crypto.randomUUID(),
      endpointId,
      verb: "answered" as const,
      activityId: "https://api.lingua.test/xapi/activities/training-items/x",
      userId: acme.learner.id,
      occurredAt: now,
      status: "pending" as const,
      createdAt: now,
    });
    const stored = [statement(created.id), statement(created.id), statement(other.id)];
    await storeOwnStateStatements(stored);
    const { res } = await api(acme, `${BASE_PATH}/${created.id}`, { method: "DELETE" });
    expect(res.status).toBe(204);
    expect((await api(acme, `${BASE_PATH}/${created.id}`)).res.status).toBe(404);
    expect(await db().select().from(xapiStatements).where(eq(xapiStatements.endpointId, created.id))).toEqual(
      [],
    );
    expect(await db().select().from(xapiBatches).where(eq(xapiBatches.endpointId, created.id))).toEqual([]);
    const keys = await db()
      .select({ id: xapiStatementKeys.id })
      .from(xapiStatementKeys)
      .where(
        inArray(
          xapiStatementKeys.id,
          stored.map((s) => s.id),
        ),
      );
    // Its keys went; another endpoint's stay.
    expect(keys).toEqual([{ id: stored[2]!.id }]);
  });
});

describe("tenancy", () => {
  it("answers 404 for another institution's endpoint on every operation, changing nothing", async () => {
    const target = lrs();
    const theirs = await create(other, basicBody(target.base));
    const paths: [string, CallOptions][] = [
      [`${BASE_PATH}/${theirs.id}`, {}],
      [`${BASE_PATH}/${theirs.id}`, { method: "PUT", body: basicBody(target.base, { name: "taken" }) }],
      [`${BASE_PATH}/${theirs.id}/test`, { method: "POST" }],
      [`${BASE_PATH}/${theirs.id}/statements`, {}],
      [`${BASE_PATH}/${theirs.id}`, { method: "DELETE" }],
    ];
    for (const [path, options] of paths) {
      const { res, body } = await api(acme, path, options);
      expect(res.status, `${options.method ?? "GET"} ${path}`).toBe(404);
      expect(body.code).toBe("not_found");
    }
    expect(await target.received()).toEqual([]);
    const list = await api(acme, BASE_PATH);
    expect(list.body.data.map((e: Endpoint) => e.id)).not.toContain(theirs.id);
    expect((await api<Endpoint>(other, `${BASE_PATH}/${theirs.id}`)).body).toEqual(theirs);
  });
});

describe("secrets", () => {
  it("are in no answer of this file", () => {
    expect(answers.length).toBeGreaterThan(20);
    for (const text of answers) for (const secret of SECRETS) expect(text).not.toContain(secret);
  });
});
