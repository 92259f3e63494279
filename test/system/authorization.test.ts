import { env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ltiLaunches } from "../../src/db/schema";
import type { createExportRoute } from "../../src/domains/exports/routes/create-export";
import type { getExportRoute } from "../../src/domains/exports/routes/get-export";
import { ROLE_CEILINGS } from "../../src/platform/auth/abilities";
import { database } from "../../src/platform/db";
import { type CallOptions, call, callJson, type RequestBody, type ResponseBody } from "../helpers/api";
import {
  documentedOperations,
  fillPath,
  inBatches,
  type Operation,
  servedRoutes,
} from "../helpers/operations";
import { type CourseFixture, createPublishedCourse } from "../helpers/progress-fixture";
import { receiverEndpoint } from "../helpers/receiver";
import {
  createPlatformAdmin,
  createTenant,
  freshIp,
  mintToken,
  type Tenant,
  type TestUser,
} from "../helpers/tenants";
import { registerPlatform } from "../lti/support";
import { insertDelivery } from "../webhooks/support";

/**
 * One authorization suite for the whole route table. The operations come from the served OpenAPI
 * document (and are held to what the route groups of src/app.ts serve), so a route added later is
 * covered without anyone listing it: every authenticated operation answers 401 without a token and
 * 403 naming its ability to a token that holds everything else; its documented ability is the one it
 * enforces; and every path parameter that names an institution's resource answers 404 when the
 * resource is another institution's, leaving that resource as it was. An operation with path
 * parameters fails here until TENANT_RESOURCES (or NOT_TENANT_OWNED) says what its parameters name.
 */

/** Operations anyone may call: exactly the operations whose `security` is empty. */
const PUBLIC = [
  "GET /healthz",
  "GET /api/openapi.json",
  "POST /api/auth/sign-in",
  "POST /api/auth/accept-invitation",
  "GET /api/public/courses",
  "GET /api/public/courses/{slug}",
  "GET /api/lti/jwks/{id}",
  // An institution's OIDC client keys (private_key_jwt): its identity provider fetches them; the
  // certificate of one, to upload where a provider takes certificates (Entra ID), public like them.
  "GET /api/institutions/{id}/sso/oidc/jwks",
  "GET /api/institutions/{id}/sso/oidc/certificate",
  "GET /api/lti/login",
  "POST /api/lti/login",
  "GET /api/lti/login/{id}",
  "POST /api/lti/login/{id}",
  "POST /api/lti/callback",
  "POST /api/lti/callback/{id}",
  "GET /api/lti/app",
  "POST /api/lti/session",
  "GET /api/lti/register",
  // The Lingua xAPI profile: the document every forwarded statement's IRIs resolve to.
  "GET /xapi/profile",
  "GET /api/lti/deep-linking/{launch}/select",
  // Stripe's webhook: signed with the endpoint's secret instead of a token.
  "POST /api/billing/webhook",
  // Single sign-on: where a person starts, where the IdP sends them back (bound to the pending request
  // and its cookie, or to a signed assertion), the code's exchange, and the SAML metadata an IdP reads.
  "GET /api/auth/sso",
  "GET /api/auth/sso/oidc/{id}/callback",
  "POST /api/auth/sso/saml/{id}/acs",
  "POST /api/auth/sso/session",
  "GET /api/institutions/{id}/sso/saml/metadata",
];

/** Operations any valid token may call, whatever its abilities: exactly those without `x-required-ability`. */
const ANY_TOKEN = ["GET /api/auth/me"];

/** Routes the worker serves outside the OpenAPI document (pages, not operations). */
const UNDOCUMENTED = ["GET /api/docs", "GET /api/docs/errors"];

/**
 * Operations whose documented ability is not enough: a defect for the domain's policy to fix (issue
 * 27, section 4), not a rule. Each entry is checked to still be so: when one is fixed, the suite says
 * so and the entry goes.
 */
const ABILITY_NOT_ENFORCED_AS_DOCUMENTED: Record<string, string> = {};

/** An institution's resources, made once per tenant; each path parameter below names one of them. */
interface Resources {
  tenant: Tenant;
  /** An API token of the admin (DELETE /tokens/{token} must leave B's working). */
  token: { id: string; token: string };
  member: string;
  webhook: string;
  delivery: string;
  event: string;
  export: string;
  bulkJob: string;
  consumer: string;
  launch: string;
  ssoDomain: string;
  /** A SCIM token of the institution (its id). */
  scimToken: string;
  /** An xAPI endpoint (its LRS the loopback receiver). */
  xapiEndpoint: string;
  /** A back-fill of that endpoint. */
  xapiBackfill: string;
  /** The loopback receiver its webhooks point at (a test sends only to loopback). */
  receiver: string;
  /** A course of the shared catalogue (not the institution's), and one of its training items. */
  course: string;
  item: string;
}

/**
 * For every path template with parameters on an authenticated operation: the values that name an
 * institution's resources. A new path template fails the suite until it has an entry here (or in
 * NOT_TENANT_OWNED): add the resource to `Resources`, make it in `makeResources` through the API (or
 * drizzle where no API makes it), and read it in `snapshot`.
 */
const TENANT_RESOURCES: Record<string, (r: Resources) => Record<string, string>> = {
  "/api/integrations/tokens/{token}": (r) => ({ token: r.token.id }),
  "/api/integrations/webhooks/{id}": (r) => ({ id: r.webhook }),
  "/api/integrations/webhooks/{id}/test": (r) => ({ id: r.webhook }),
  "/api/integrations/webhooks/{id}/rotate-secret": (r) => ({ id: r.webhook }),
  "/api/integrations/webhooks/{id}/deliveries": (r) => ({ id: r.webhook }),
  "/api/integrations/webhooks/{id}/deliveries/{delivery}": (r) => ({ id: r.webhook, delivery: r.delivery }),
  "/api/integrations/webhooks/{id}/deliveries/{delivery}/redeliver": (r) => ({
    id: r.webhook,
    delivery: r.delivery,
  }),
  "/api/integrations/webhooks/{id}/recover": (r) => ({ id: r.webhook }),
  "/api/integrations/events/{id}": (r) => ({ id: r.event }),
  "/api/institutions/{id}": (r) => ({ id: r.tenant.institution.id }),
  "/api/institutions/{id}/members/bulk": (r) => ({ id: r.tenant.institution.id }),
  "/api/institutions/{id}/members/bulk/{job}": (r) => ({ id: r.tenant.institution.id, job: r.bulkJob }),
  "/api/institutions/{id}/members/bulk/{job}/rejected.csv": (r) => ({
    id: r.tenant.institution.id,
    job: r.bulkJob,
  }),
  "/api/institutions/{id}/members/bulk/{job}/invitations": (r) => ({
    id: r.tenant.institution.id,
    job: r.bulkJob,
  }),
  "/api/institutions/{id}/members": (r) => ({ id: r.tenant.institution.id }),
  "/api/institutions/{id}/members/{member}": (r) => ({ id: r.tenant.institution.id, member: r.member }),
  "/api/institutions/{id}/invitations": (r) => ({ id: r.tenant.institution.id }),
  "/api/institutions/{id}/analytics": (r) => ({ id: r.tenant.institution.id }),
  "/api/institutions/{id}/sso": (r) => ({ id: r.tenant.institution.id }),
  "/api/institutions/{id}/sso/log": (r) => ({ id: r.tenant.institution.id }),
  "/api/institutions/{id}/sso/oidc/keys/rotate": (r) => ({ id: r.tenant.institution.id }),
  "/api/institutions/{id}/scim": (r) => ({ id: r.tenant.institution.id }),
  "/api/institutions/{id}/scim-tokens": (r) => ({ id: r.tenant.institution.id }),
  "/api/institutions/{id}/scim-tokens/{token}": (r) => ({ id: r.tenant.institution.id, token: r.scimToken }),
  "/api/institutions/{id}/sso/domains/{domain}/verify": (r) => ({
    id: r.tenant.institution.id,
    domain: r.ssoDomain,
  }),
  "/api/institutions/{id}/compliance": (r) => ({ id: r.tenant.institution.id }),
  "/api/institutions/{id}/compliance/{type}": (r) => ({ id: r.tenant.institution.id, type: "dpa" }),
  "/api/institutions/{id}/move": (r) => ({ id: r.tenant.institution.id }),
  "/api/integrations/exports/{id}": (r) => ({ id: r.export }),
  "/api/integrations/exports/{id}/download": (r) => ({ id: r.export }),
  "/api/integrations/lti-consumers/{id}": (r) => ({ id: r.consumer }),
  "/api/integrations/lti-consumers/{id}/keys/rotate": (r) => ({ id: r.consumer }),
  "/api/integrations/lti-launches/{launch}": (r) => ({ launch: r.launch }),
  "/api/lti/grade-passback/{launch}": (r) => ({ launch: r.launch }),
  "/api/integrations/lti-launches/{launch}/members": (r) => ({ launch: r.launch }),
  "/api/integrations/lti-launches/{launch}/members/sync": (r) => ({ launch: r.launch }),
  "/api/integrations/lti-launches/{launch}/line-items": (r) => ({ launch: r.launch }),
  "/api/integrations/xapi-endpoints/{id}": (r) => ({ id: r.xapiEndpoint }),
  "/api/integrations/xapi-endpoints/{id}/test": (r) => ({ id: r.xapiEndpoint }),
  "/api/integrations/xapi-endpoints/{id}/statements": (r) => ({ id: r.xapiEndpoint }),
  "/api/integrations/xapi-endpoints/{id}/backfill": (r) => ({ id: r.xapiEndpoint }),
  "/api/integrations/xapi-endpoints/{id}/backfills": (r) => ({ id: r.xapiEndpoint }),
  "/api/integrations/xapi-endpoints/{id}/backfills/{backfill}": (r) => ({
    id: r.xapiEndpoint,
    backfill: r.xapiBackfill,
  }),
  // Only the launch's own session reaches it; another institution's token (its admin's) is 404.
  "/api/lti/deep-linking/{launch}/items": (r) => ({ launch: r.launch }),
  "/api/lti/deep-linking/{launch}/response": (r) => ({ launch: r.launch }),
};

/** Path templates whose parameters name nothing an institution owns: why, and the values to use. */
const NOT_TENANT_OWNED: Record<string, { why: string; params: (r: Resources) => Record<string, string> }> = {
  "/api/courses/{id}": {
    why: "courses are the platform's catalogue, shared by every institution",
    params: (r) => ({ id: r.course }),
  },
  "/api/courses/{course}/lesson-progress": {
    why: "the course is shared; the progress read is the caller's own",
    params: (r) => ({ course: r.course }),
  },
};

/** The path parameters naming `r`'s resources (placeholders for what no table names). */
function paramsFor(op: Operation, r: Resources): Record<string, string> {
  return (TENANT_RESOURCES[op.path] ?? NOT_TENANT_OWNED[op.path]?.params)?.(r) ?? {};
}

/** A request that passes validation, for operations that need a body to reach their handler. */
function requestFor(name: string, r: Resources): Pick<CallOptions, "body" | "rawBody" | "headers"> {
  const email = `authz.${crypto.randomUUID()}@school.test`;
  const renamed = "Renamed by the authorization suite";
  switch (name) {
    case "POST /api/integrations/tokens":
      return { body: { name: "authz", abilities: ["tokens:write"] } };
    case "PATCH /api/courses/{id}":
      return { body: { description: renamed } };
    case "POST /api/progress/attempts":
      return {
        body: {
          attempts: [
            {
              id: crypto.randomUUID(),
              training_item_id: r.item,
              score: 1,
              correct: true,
              duration_seconds: 20,
              occurred_at: new Date(Date.now() - 60_000).toISOString(),
            },
          ],
        },
      };
    case "POST /api/integrations/webhooks":
      return { body: { url: r.receiver, events: ["lesson.completed"] } };
    case "PUT /api/integrations/webhooks/{id}":
      return { body: { description: renamed } };
    case "POST /api/integrations/webhooks/{id}/recover":
      return { body: { since: new Date(Date.now() - 3_600_000).toISOString() } };
    case "POST /api/institutions":
      return { body: { name: "Made by the authorization suite" } };
    case "PATCH /api/institutions/{id}":
      return { body: { name: renamed } };
    case "POST /api/institutions/{id}/members":
      return { body: { email, name: "Authz Member", role: "learner" } };
    case "PATCH /api/institutions/{id}/members/{member}":
      return { body: { name: renamed } };
    case "POST /api/institutions/{id}/members/bulk":
      return { rawBody: `email,name\r\n${email},Authz Member\r\n`, headers: { "Content-Type": "text/csv" } };
    case "POST /api/institutions/{id}/invitations":
      return { body: { member_id: r.member } };
    case "PUT /api/institutions/{id}/sso":
      return { body: { type: "saml", domains: [r.ssoDomain], saml: {} } };
    case "PUT /api/institutions/{id}/compliance/{type}":
      return { body: { status: "in_review" } };
    case "POST /api/institutions/{id}/move":
      return { body: { database: "DB_1" } };
    case "PUT /api/institutions/{id}/scim":
      return { body: { department_as_group: true } };
    case "POST /api/integrations/exports":
      return { body: { type: "activity" } };
    case "POST /api/integrations/lti-consumers":
      return {
        body: {
          name: "Authz LMS",
          issuer: "https://lms.authz.example",
          client_id: crypto.randomUUID(),
          deployment_ids: ["authz"],
          auth_login_url: "https://lms.authz.example/login",
          auth_token_url: "https://lms.authz.example/token",
          jwks_url: "https://lms.authz.example/jwks",
        },
      };
    case "PUT /api/integrations/lti-consumers/{id}":
      return { body: { name: renamed } };
    case "POST /api/integrations/xapi-endpoints":
      return { body: xapiEndpointBody(r.receiver) };
    case "PUT /api/integrations/xapi-endpoints/{id}":
      return { body: { ...xapiEndpointBody(r.receiver), name: renamed } };
    case "POST /api/integrations/xapi-endpoints/{id}/backfill":
      return { body: { since: new Date(Date.now() - 3_600_000).toISOString() } };
    case "POST /api/lti/grade-passback/{launch}":
      return { body: { score_given: 1, score_maximum: 1 } };
    case "POST /api/lti/deep-linking/{launch}/response":
      return { body: { items: [{ course_id: r.course }] } };
    case "POST /api/integrations/lti-launches/{launch}/line-items":
      return { body: { label: "Authz", score_maximum: 1, course_id: r.course } };
    // Billing talks to the run's Stripe stand-in; its redirects may go to the tests' app origin.
    case "POST /api/billing/checkout-session":
      return {
        body: {
          plan: "pro",
          success_url: "https://app.example.test/done",
          cancel_url: "https://app.example.test/",
        },
      };
    case "POST /api/billing/portal-session":
      return { body: { return_url: "https://app.example.test/" } };
    case "POST /api/billing/apply-promo":
      return { body: { code: "WELCOME20" } };
    default:
      return {};
  }
}

/** An xAPI endpoint whose LRS is the loopback receiver. */
function xapiEndpointBody(receiver: string) {
  return {
    name: "Authz LRS",
    endpoint: `${receiver}/xapi/`,
    auth: { type: "basic", username: "authz", password: "authz-password" },
  };
}

const ADMIN_CEILING: readonly string[] = ROLE_CEILINGS.institution_admin;

let operations: Operation[];
/** A: the caller. B: the other institution, whose resources A must not reach. */
let acme: Resources;
let foreign: Resources;
/** An institution of its own for the tokens holding one ability (their operations change what they reach). */
let own: Resources;
let staff: TestUser;

/** Who can hold `ability`: `tenant`'s admin, or (platform-only abilities) platform staff. */
function ownerFor(ability: string, tenant: Tenant): TestUser {
  return ADMIN_CEILING.includes(ability) ? tenant.admin : staff;
}

/** Per ability, a token of A's without it (and every other ability) and one of C's with only it. */
const tokens = new Map<string, { without: string; only: string }>();

async function makeResources(t: Tenant, course: CourseFixture): Promise<Resources> {
  const as = <T = any>(path: string, options: CallOptions = {}) =>
    callJson<T>(path, { token: t.admin.token, ...options });
  const created = <T>({ res, body }: { res: Response; body: T }) => {
    if (res.status >= 300) throw new Error(`fixture: ${res.status} ${JSON.stringify(body)}`);
    return body;
  };
  const exportRequest: RequestBody<typeof createExportRoute> = { type: "activity" };
  const ssoDomain = `authz-${crypto.randomUUID()}.example`;
  const receiver = receiverEndpoint();
  const [token, webhook, exportJob, bulk, registered, , xapiEndpoint, scimToken] = await Promise.all([
    mintToken(t.admin, ["content:read"]),
    as("/api/integrations/webhooks", {
      body: { url: receiver.url, events: ["lesson.completed"] },
    }).then(created),
    as<ResponseBody<typeof createExportRoute, 202>>("/api/integrations/exports", {
      body: exportRequest,
    }).then(created),
    as(`/api/institutions/${t.institution.id}/members/bulk`, {
      method: "POST",
      rawBody: `email,name\r\nauthz.${crypto.randomUUID()}@school.test,Bulk Member\r\nnot-an-address,Rejected\r\n`,
      headers: { "Content-Type": "text/csv" },
    }).then(created),
    registerPlatform(t.admin),
    as(`/api/institutions/${t.institution.id}/sso`, {
      method: "PUT",
      body: { type: "saml", domains: [ssoDomain], saml: {} },
    }).then(created),
    as("/api/integrations/xapi-endpoints", { body: xapiEndpointBody(receiver.url) }).then(created),
    as(`/api/institutions/${t.institution.id}/scim-tokens`, { body: { name: "authz" } }).then(created),
  ]);
  const { deliveryId, eventId } = await insertDelivery(webhook.id, t.institution.id, { status: "failed" });
  const xapiBackfill = await as(`/api/integrations/xapi-endpoints/${xapiEndpoint.id}/backfill`, {
    body: { since: new Date(Date.now() - 3_600_000).toISOString() },
  }).then(created);
  // A launch is made by an LMS's signed id_token; its row is all the read and passback paths need.
  const launch = `lch_authz_${crypto.randomUUID()}`;
  await database(env.DB)
    .insert(ltiLaunches)
    .values({
      id: launch,
      institutionId: t.institution.id,
      consumerId: registered.consumer.id,
      status: "succeeded",
      deploymentId: registered.deploymentId,
      messageType: "LtiResourceLinkRequest",
      sub: "lms-user-1",
      userId: t.learner.id,
      roles: [],
      createdAt: new Date().toISOString().replace(/\.\d{3}Z$/, "Z"),
    });
  // The export runs on the queue: let it settle, so that snapshots compare like with like.
  for (const until = Date.now() + 20_000; ; ) {
    const { body } = await as<ResponseBody<typeof getExportRoute, 200>>(
      `/api/integrations/exports/${exportJob.id}`,
    );
    if (body.status === "completed" || body.status === "failed") break;
    if (Date.now() > until) throw new Error(`export still ${body.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  // The back-fill too (an institution without activity: it completes at once).
  for (const until = Date.now() + 20_000; ; ) {
    const { body } = await as(
      `/api/integrations/xapi-endpoints/${xapiEndpoint.id}/backfills/${xapiBackfill.id}`,
    );
    if (body.status === "completed" || body.status === "failed") break;
    if (Date.now() > until) throw new Error(`xAPI back-fill still ${body.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    tenant: t,
    token: { id: token.id, token: token.token },
    member: t.learner.id,
    webhook: webhook.id,
    delivery: deliveryId,
    event: eventId,
    export: exportJob.id,
    bulkJob: bulk.id,
    consumer: registered.consumer.id,
    launch,
    ssoDomain,
    scimToken: scimToken.id,
    xapiEndpoint: xapiEndpoint.id,
    xapiBackfill: xapiBackfill.id,
    receiver: receiver.url,
    course: course.courseId,
    item: course.items[0]!,
  };
}

/** `r`'s resources as its own admin sees them, and whether its API token still works. */
async function snapshot(r: Resources) {
  const id = r.tenant.institution.id;
  const paths = [
    `/api/institutions/${id}`,
    `/api/institutions/${id}/members/${r.member}`,
    `/api/institutions/${id}/members/bulk/${r.bulkJob}`,
    `/api/institutions/${id}/sso`,
    `/api/institutions/${id}/scim`,
    `/api/institutions/${id}/scim-tokens`,
    `/api/institutions/${id}/compliance`,
    `/api/integrations/webhooks/${r.webhook}`,
    `/api/integrations/webhooks/${r.webhook}/deliveries/${r.delivery}`,
    `/api/integrations/events/${r.event}`,
    `/api/integrations/exports/${r.export}`,
    `/api/integrations/lti-consumers/${r.consumer}`,
    `/api/integrations/lti-launches/${r.launch}`,
    `/api/integrations/xapi-endpoints/${r.xapiEndpoint}`,
    `/api/integrations/xapi-endpoints/${r.xapiEndpoint}/backfills`,
  ];
  const reads = await Promise.all(
    paths.map(async (path) => {
      const { res, body } = await callJson(path, { token: r.tenant.admin.token });
      return [path, { status: res.status, body }] as const;
    }),
  );
  const me = await call("/api/auth/me", { token: r.token.token });
  return { ...Object.fromEntries(reads), token: me.status };
}

beforeAll(async () => {
  operations = await documentedOperations();
  const [a, b, c, platformAdmin, course] = await Promise.all([
    createTenant(),
    createTenant(),
    createTenant(),
    createPlatformAdmin(),
    createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 1 }),
  ]);
  staff = platformAdmin;
  [acme, foreign, own] = await Promise.all([
    makeResources(a, course),
    makeResources(b, course),
    makeResources(c, course),
  ]);
  const abilities = [...new Set(operations.flatMap((op) => (op.ability ? [op.ability] : [])))];
  await inBatches(abilities, 4, async (ability) => {
    const owner = ownerFor(ability, a);
    const everythingElse = ROLE_CEILINGS[owner.role as keyof typeof ROLE_CEILINGS].filter(
      (x) => x !== ability,
    );
    const [without, only] = await Promise.all([
      mintToken(owner, everythingElse, { name: `all but ${ability}` }),
      mintToken(ownerFor(ability, c), [ability]),
    ]);
    tokens.set(ability, { without: without.token, only: only.token });
  });
}, 60_000);

/**
 * One call of `op`: path parameters from `params` (a value that names nothing for the others), the
 * request `requestFor` gives for `r`, a fresh client address; the body parsed when it is JSON.
 */
async function request(
  op: Operation,
  token: string | undefined,
  params: Record<string, string>,
  r?: Resources,
) {
  const defaults = Object.fromEntries(op.pathParams.map((name) => [name, `no-such-${name}`]));
  const parts = r ? requestFor(op.name, r) : {};
  const res = await call(fillPath(op.path, { ...defaults, ...params }), {
    method: op.method,
    token,
    ...parts,
    headers: { "CF-Connecting-IP": freshIp(), ...parts.headers },
  });
  const text = await res.text();
  const body = /json/.test(res.headers.get("Content-Type") ?? "") && text ? JSON.parse(text) : undefined;
  return { res, body };
}

describe("the route table", () => {
  it("documents every route the worker serves, except the listed pages", async () => {
    const documented = operations.map((op) => op.name);
    expect((await servedRoutes()).sort()).toEqual([...documented, ...UNDOCUMENTED].sort());
  });

  it("has exactly the listed public operations without a token", () => {
    expect(
      operations
        .filter((op) => !op.authenticated)
        .map((op) => op.name)
        .sort(),
    ).toEqual([...PUBLIC].sort());
  });

  it("names the required ability of every authenticated operation but the listed ones", () => {
    expect(
      operations
        .filter((op) => op.authenticated && !op.ability)
        .map((op) => op.name)
        .sort(),
    ).toEqual([...ANY_TOKEN].sort());
  });
});

describe("every authenticated operation", () => {
  it("answers 401 without a token, and with a token nobody issued", async () => {
    const secured = operations.filter((op) => op.authenticated);
    const calls = secured.flatMap((op) => [
      { op, token: undefined, label: op.name },
      { op, token: `lng_${"A".repeat(43)}`, label: `${op.name} (unknown token)` },
    ]);
    const results = await inBatches(calls, 8, async ({ op, token, label }) => {
      const { res, body } = await request(op, token, {});
      return {
        op: label,
        status: res.status,
        type: res.headers.get("Content-Type"),
        code: body?.code,
        www: res.headers.get("WWW-Authenticate"),
      };
    });
    for (const r of results) {
      expect(r, r.op).toEqual({
        op: r.op,
        status: 401,
        type: "application/problem+json",
        code: "unauthenticated",
        www: expect.stringMatching(/^Bearer/),
      });
    }
  });

  it("answers 403 naming its ability to a token holding every other ability of the role", async () => {
    const guarded = operations.filter((op) => op.authenticated && op.ability);
    expect(guarded.length).toBeGreaterThan(40);
    const results = await inBatches(guarded, 8, async (op) => {
      const { res, body } = await request(op, tokens.get(op.ability!)!.without, {});
      return { op: op.name, status: res.status, code: body?.code, detail: body?.detail };
    });
    for (const r of results) {
      const ability = guarded.find((op) => op.name === r.op)!.ability!;
      expect(r, r.op).toEqual({
        op: r.op,
        status: 403,
        code: "missing_ability",
        detail: expect.stringContaining(`\`${ability}\``),
      });
    }
  });

  it("needs no ability beyond the documented one", async () => {
    // A token holding only the documented ability, on the caller's own institution, may be refused
    // for a reason (422, 404, a role rule), but never for lacking another ability.
    const guarded = operations.filter((op) => op.authenticated && op.ability);
    // C's own resources: DELETEs last, so that the other operations find them.
    const ordered = [
      ...guarded.filter((op) => op.method !== "DELETE"),
      ...guarded.filter((op) => op.method === "DELETE"),
    ];
    const results = await inBatches(ordered, 8, async (op) => {
      const { res, body } = await request(op, tokens.get(op.ability!)!.only, paramsFor(op, own), own);
      return {
        op: op.name,
        refused: res.status === 403 && body?.code === "missing_ability",
        detail: body?.detail,
      };
    });
    for (const r of results) {
      const known = r.op in ABILITY_NOT_ENFORCED_AS_DOCUMENTED;
      expect(
        r.refused,
        `${r.op}: ${known ? "fixed? remove it from ABILITY_NOT_ENFORCED_AS_DOCUMENTED" : r.detail}`,
      ).toBe(known);
    }
  });
});

/**
 * The operations above start queued work in C (an export among them). Wait for it before the file
 * ends: a consumer still running once the file's storage is gone fails outside any test, and the
 * pool can then hang instead of moving to the next file.
 */
afterAll(async () => {
  for (const until = Date.now() + 30_000; ; ) {
    const { res, body } = await callJson("/api/integrations/exports?per_page=100", {
      token: own.tenant.admin.token,
    });
    const busy = (body?.data ?? []).filter((job: { status: string }) =>
      ["queued", "processing"].includes(job.status),
    );
    if (res.status === 200 && busy.length === 0) return;
    if (Date.now() > until) throw new Error(`${busy.length} export(s) of C still running`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}, 40_000);

describe("another institution's resources", () => {
  it("has a fixture for every path parameter of an authenticated operation", () => {
    const missing = operations
      .filter((op) => op.authenticated && op.pathParams.length > 0)
      .filter((op) => !TENANT_RESOURCES[op.path] && !NOT_TENANT_OWNED[op.path])
      .map((op) => op.name);
    expect(
      missing,
      "add each path to TENANT_RESOURCES (how to make institution B's resource) or NOT_TENANT_OWNED (why not)",
    ).toEqual([]);
  });

  it("answers 404 to another institution's admin holding the ability, and leaves them as they were", async () => {
    const scoped = operations.filter(
      (op) =>
        op.authenticated &&
        TENANT_RESOURCES[op.path] &&
        // Platform-only abilities (`institutions:write`): no institution's admin can hold them, and
        // platform staff act on every institution; their 403 is the missing ability above.
        (!op.ability || ADMIN_CEILING.includes(op.ability)),
    );
    expect(scoped.length).toBeGreaterThan(30);
    // Every id B's; and, where a path nests ids, the outer one A's own and the inner ones B's.
    const calls = scoped.flatMap((op) => {
      const theirs = paramsFor(op, foreign);
      const calls = [{ op, params: theirs, label: op.name }];
      if (op.pathParams.length > 1) {
        const outer = op.pathParams[0]!;
        const nested = { ...theirs, [outer]: paramsFor(op, acme)[outer]! };
        calls.push({ op, params: nested, label: `${op.name} (own {${outer}})` });
      }
      return calls;
    });
    const before = await snapshot(foreign);
    const results = await inBatches(calls, 6, async ({ op, params, label }) => {
      const { res, body } = await request(op, acme.tenant.admin.token, params, foreign);
      return { call: label, status: res.status, code: body?.code };
    });
    for (const r of results) expect(r).toEqual({ call: r.call, status: 404, code: "not_found" });
    expect(await snapshot(foreign)).toEqual(before);
  });
});
