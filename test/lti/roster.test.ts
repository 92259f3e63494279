// Names and Role Provisioning 2.0: the roster of a launch's context, read from the loopback platform
// (test/lti/platform-services.ts), and the sync that makes its active members Lingua members.
import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { institutions, ltiRosterSyncs, users } from "../../src/db/schema";
import { sweepRosterSyncs } from "../../src/domains/lti/roster/sweep";
import { database } from "../../src/platform/db";
import { callJson } from "../helpers/api";
import { testContext } from "../helpers/context";
import { createTenant, mintToken } from "../helpers/tenants";
import { runQueue, waitUntil } from "../webhooks/support";
import {
  INSTRUCTOR_ROLE,
  launch,
  NRPS_CLAIM,
  NRPS_SCOPE,
  type Registered,
  registerPlatform,
  rosterMember,
  servicesState,
} from "./support";

const MEMBERSHIP_TYPE = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json";

/** A registration whose platform has `roster`, and a launch (by `sub`) that carries the NRPS claim. */
async function rosterLaunch(roster: Record<string, unknown>[], sub = `user-${crypto.randomUUID()}`) {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  await reg.platform.learnToolKeys();
  const state = await servicesState(reg.platform);
  await reg.platform.configure({ roster });
  const launched = await launch(reg, {
    sub,
    [NRPS_CLAIM]: { context_memberships_url: state.context_memberships_url, service_versions: ["2.0"] },
  });
  if (launched.res.status !== 200) throw new Error(JSON.stringify(launched.body));
  return { tenant, reg, launch: launched.body.launch, user: launched.body.user, sub };
}

function members(token: string, launchId: string, query = "") {
  return callJson(`/api/integrations/lti-launches/${launchId}/members${query}`, { token });
}

function sync(token: string, launchId: string) {
  return callJson(`/api/integrations/lti-launches/${launchId}/members/sync`, { token, method: "POST" });
}

const memberRequests = async (reg: Registered) =>
  (await servicesState(reg.platform)).service_requests.filter((r) => r.service === "memberships");

it("lists the roster from every page the platform links, with the NRPS scope and media type", async () => {
  const sub = "m-3";
  const roster = ["m-5", "m-1", sub, "m-4", "m-2"].map((id) => rosterMember(id));
  roster[3] = rosterMember("m-4", { status: "Inactive", roles: [INSTRUCTOR_ROLE] });
  const { tenant, reg, launch: l, user } = await rosterLaunch(roster, sub);
  const { res, body } = await members(tenant.admin.token, l.id);
  expect(res.status).toBe(200);
  expect(body.meta).toMatchObject({ total: 5, current_page: 1 });
  expect(body.data.map((m: any) => m.user_id)).toEqual(["m-1", "m-2", "m-3", "m-4", "m-5"]);
  expect(body.data[2]).toEqual({
    user_id: "m-3",
    name: "Member m-3",
    given_name: null,
    family_name: null,
    email: "m-3@lms.example",
    roles: ["http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"],
    status: "Active",
    lingua_user_id: user.id,
  });
  expect(body.data[3]).toMatchObject({ user_id: "m-4", status: "Inactive", lingua_user_id: null });
  // Three pages of two, each with a token for the NRPS scope and the membership container type.
  const requests = await memberRequests(reg);
  expect(requests).toHaveLength(3);
  for (const request of requests)
    expect(request).toMatchObject({
      method: "GET",
      accept: MEMBERSHIP_TYPE,
      token_scope: NRPS_SCOPE,
      status: 200,
    });
  expect(requests.map((r) => new URLSearchParams(r.search).get("offset"))).toEqual([null, "2", "4"]);
  // The token is cached: a second read asks the token endpoint for nothing more.
  const tokensBefore = (await reg.platform.state()).token_requests.length;
  const again = await members(tenant.admin.token, l.id, "?per_page=2&page=3");
  expect(again.body.data.map((m: any) => m.user_id)).toEqual(["m-5"]);
  expect(again.body.links.prev).toContain("page=2");
  expect((await reg.platform.state()).token_requests).toHaveLength(tokensBefore);
});

it("passes role and limit to the platform", async () => {
  const roster = [
    rosterMember("t-1", { roles: [INSTRUCTOR_ROLE] }),
    rosterMember("s-1"),
    rosterMember("s-2"),
    rosterMember("s-3"),
  ];
  const { tenant, reg, launch: l } = await rosterLaunch(roster);
  const { res, body } = await members(tenant.admin.token, l.id, "?role=Learner&limit=3");
  expect(res.status).toBe(200);
  expect(body.data.map((m: any) => m.user_id)).toEqual(["s-1", "s-2", "s-3"]);
  const [first] = await memberRequests(reg);
  expect(new URLSearchParams(first!.search).get("role")).toBe("Learner");
  expect(new URLSearchParams(first!.search).get("limit")).toBe("3");
  // One page of three: the limit was the platform's page size.
  expect(await memberRequests(reg)).toHaveLength(1);
  const bad = await members(tenant.admin.token, l.id, "?limit=0");
  expect(bad.res.status).toBe(422);
});

it("a launch without the NRPS claim is 409 lti_roster_unavailable; another institution's launch is 404; lti:read is needed", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const plain = await launch(reg);
  const { res, body } = await members(tenant.admin.token, plain.body.launch.id);
  expect(res.status).toBe(409);
  expect(body.code).toBe("lti_roster_unavailable");
  expect((await sync(tenant.admin.token, plain.body.launch.id)).body.code).toBe("lti_roster_unavailable");
  // A claim whose URL is not one platform URLs may be.
  const bad = await launch(reg, { [NRPS_CLAIM]: { context_memberships_url: "javascript:alert(1)" } });
  expect((await members(tenant.admin.token, bad.body.launch.id)).body.code).toBe("lti_roster_unavailable");

  const other = await createTenant();
  const foreign = await members(other.admin.token, plain.body.launch.id);
  expect(foreign.res.status).toBe(404);
  const writer = await mintToken(tenant.admin, ["lti:write"]);
  expect((await members(writer.token, plain.body.launch.id)).res.status).toBe(403);
  const reader = await mintToken(tenant.admin, ["lti:read"]);
  expect((await sync(reader.token, plain.body.launch.id)).res.status).toBe(403);
});

it("a next page on another origin is not followed (the token would go with it): 502, nothing sent there", async () => {
  const roster = ["a", "b", "c"].map((id) => rosterMember(id));
  const { tenant, reg, launch: l } = await rosterLaunch(roster);
  await reg.platform.configure({ roster_next_origin: "http://127.0.0.2:9" });
  const { res, body } = await members(tenant.admin.token, l.id);
  expect(res.status).toBe(502);
  expect(body.code).toBe("bad_gateway");
  expect(body.detail).toMatch(/another origin/);
  expect(await memberRequests(reg)).toHaveLength(1);
});

it("a platform that refuses the roster is 502 lti_platform_rejected with its status", async () => {
  const { tenant, reg, launch: l } = await rosterLaunch([rosterMember("x")]);
  // The token endpoint refuses the tool (its keys unknown to the platform).
  await reg.platform.configure({ tool_jwks: { keys: [] } });
  const { res, body } = await members(tenant.admin.token, l.id);
  expect(res.status).toBe(502);
  expect(body).toMatchObject({ code: "lti_platform_rejected", platform_status: 401 });
  expect(await memberRequests(reg)).toHaveLength(0);
});

it("sync makes each active member a Lingua member once, linked to their sub: their first launch finds them", async () => {
  const sub = "s-launcher";
  const roster = [
    rosterMember(sub),
    rosterMember("s-new-1", { name: "Grace\u202E Hopper\u0007", email: "GRACE@lms.example" }),
    rosterMember("s-new-2", { roles: [INSTRUCTOR_ROLE], email: "taken@lms.example" }),
    rosterMember("s-gone", { status: "Deleted" }),
    rosterMember("s-off", { status: "Inactive" }),
  ];
  const { tenant, reg, launch: l, user } = await rosterLaunch(roster, sub);
  // Another account holds one member's e-mail: that member gets none.
  const db = database(env.DB);
  const other = await createTenant();
  await db.update(users).set({ email: "taken@lms.example" }).where(eq(users.id, other.learner.id));

  const first = await sync(tenant.admin.token, l.id);
  expect(first.res.status).toBe(200);
  expect(first.body).toMatchObject({
    id: expect.stringMatching(/^lrs_/),
    launch_id: l.id,
    status: "completed",
    active: 3,
    inactive: 2,
    created: 2,
    already_linked: 1,
    seats_exhausted: 0,
    error: null,
    completed_at: expect.any(String),
  });
  const listed = (await members(tenant.admin.token, l.id)).body.data;
  const byId = Object.fromEntries(listed.map((m: any) => [m.user_id, m.lingua_user_id]));
  expect(byId[sub]).toBe(user.id);
  expect(byId["s-new-1"]).toMatch(/^usr_/);
  expect(byId["s-gone"]).toBeNull();
  expect(byId["s-off"]).toBeNull();
  const made = await db.select().from(users).where(eq(users.id, byId["s-new-1"])).get();
  expect(made).toMatchObject({
    institutionId: tenant.institution.id,
    name: "Grace Hopper",
    email: "grace@lms.example",
    role: "learner",
    status: "active",
    lastActiveAt: null,
  });
  const teacher = await db.select().from(users).where(eq(users.id, byId["s-new-2"])).get();
  expect(teacher).toMatchObject({ role: "instructor" });
  expect(teacher!.email).toMatch(/@lti\.invalid$/);
  // They are members of the institution, as the members API shows them.
  const listedMembers = await callJson(`/api/institutions/${tenant.institution.id}/members?per_page=100`, {
    token: tenant.admin.token,
  });
  expect(listedMembers.body.data.map((m: any) => m.id)).toContain(byId["s-new-1"]);

  // Again: nothing new.
  const second = await sync(tenant.admin.token, l.id);
  expect(second.res.status).toBe(200);
  expect(second.body).toMatchObject({ created: 0, already_linked: 3 });
  const latest = await callJson(`/api/integrations/lti-launches/${l.id}/members/sync`, {
    token: tenant.admin.token,
  });
  expect(latest.body.id).toBe(second.body.id);

  // The synced member's first launch signs into the user the sync made.
  const theirs = await launch(reg, { sub: "s-new-1" });
  expect(theirs.body.user.id).toBe(byId["s-new-1"]);
});

it("sync stops at the institution's seats and says how many were left out", async () => {
  const roster = ["a", "b", "c", "d"].map((id) => rosterMember(`seat-${id}`));
  const { tenant, launch: l } = await rosterLaunch(roster);
  // Seats for the tenant's three users, the launcher and two more.
  await database(env.DB)
    .update(institutions)
    .set({ seats: 6 })
    .where(eq(institutions.id, tenant.institution.id));
  const { res, body } = await sync(tenant.admin.token, l.id);
  expect(res.status).toBe(200);
  expect(body).toMatchObject({ active: 4, created: 2, seats_exhausted: 2 });
});

it("a roster of more than 500 active members is synced through the queue, and a request meanwhile answers the running sync", async () => {
  const roster = Array.from({ length: 503 }, (_, i) => rosterMember(`big-${String(i).padStart(3, "0")}`));
  const { tenant, reg, launch: l } = await rosterLaunch(roster);
  await reg.platform.configure({ roster_page_size: 200 });
  const queued = await sync(tenant.admin.token, l.id);
  expect(queued.res.status).toBe(202);
  expect(queued.body).toMatchObject({ status: "queued", active: 503, created: 0 });
  // While it runs, another request answers it (unless the queue finished it already).
  const twin = await sync(tenant.admin.token, l.id);
  if (twin.body.status === "queued" || twin.body.status === "processing")
    expect(twin.body.id).toBe(queued.body.id);
  const done = await waitUntil(async () => {
    const { body } = await callJson(`/api/integrations/lti-launches/${l.id}/members/sync`, {
      token: tenant.admin.token,
    });
    return body.id === queued.body.id && body.status === "completed" ? body : null;
  }, 60_000);
  expect(done).toMatchObject({ active: 503, created: 503, already_linked: 0, seats_exhausted: 0 });
  const linked = (await members(tenant.admin.token, l.id, "?per_page=100&page=6")).body;
  expect(linked.meta.total).toBe(503);
  expect(linked.data.every((m: any) => m.lingua_user_id)).toBe(true);
});

/** A queued sync of `launchId` written straight to D1 (no message), as a lost one would look. */
async function lostSync(
  launchId: string,
  institutionId: string,
  fields: Partial<typeof ltiRosterSyncs.$inferInsert> = {},
) {
  const id = `lrs_test_${crypto.randomUUID()}`;
  await database(env.DB)
    .insert(ltiRosterSyncs)
    .values({
      id,
      institutionId,
      launchId,
      status: "queued",
      generation: 0,
      leaseId: null,
      leaseUntil: Date.now() - 1_000,
      createdAt: new Date().toISOString(),
      ...fields,
    });
  return id;
}

const syncRow = (id: string) =>
  database(env.DB).select().from(ltiRosterSyncs).where(eq(ltiRosterSyncs.id, id)).get();

it("the queue's consumer provisions a sync once; a message of another generation, or of a finished sync, changes nothing", async () => {
  const roster = ["q-1", "q-2", "q-3"].map((id) => rosterMember(id));
  const { tenant, launch: l } = await rosterLaunch(roster);
  const id = await lostSync(l.id, tenant.institution.id, { generation: 1 });
  const stale = await runQueue("lingua-lti-roster", [{ sync_id: id, generation: 0 }]);
  expect(stale.explicitAcks).toHaveLength(1);
  expect(await syncRow(id)).toMatchObject({ status: "queued", createdCount: 0 });

  const run = await runQueue("lingua-lti-roster", [{ sync_id: id, generation: 1 }]);
  expect(run.explicitAcks).toHaveLength(1);
  expect(await syncRow(id)).toMatchObject({
    status: "completed",
    activeCount: 3,
    createdCount: 3,
    alreadyLinkedCount: 0,
    leaseId: null,
  });
  const twice = await runQueue("lingua-lti-roster", [{ sync_id: id, generation: 1 }]);
  expect(twice.explicitAcks).toHaveLength(1);
  expect(await syncRow(id)).toMatchObject({ createdCount: 3 });
  // A body that does not fit goes to the dead-letter queue at once.
  const junk = await runQueue("lingua-lti-roster", [{ nope: true }]);
  expect(junk.explicitAcks).toHaveLength(1);
});

it("the minute sweep resumes a sync whose lease ran out, fails one a day old; a dead letter fails its sync", async () => {
  const { tenant, launch: l } = await rosterLaunch([rosterMember("w-1")]);
  const lost = await lostSync(l.id, tenant.institution.id);
  const result = await sweepRosterSyncs(testContext());
  expect(result.resumed).toBeGreaterThanOrEqual(1);
  // The sweep's message reaches the consumer, which finishes it.
  const done = await waitUntil(async () => {
    const row = await syncRow(lost);
    return row?.status === "completed" ? row : null;
  });
  expect(done).toMatchObject({ createdCount: 1, alreadyLinkedCount: 0 });

  const other = await rosterLaunch([rosterMember("w-2")]);
  const old = await lostSync(other.launch.id, other.tenant.institution.id, {
    createdAt: new Date(Date.now() - 25 * 3_600_000).toISOString(),
  });
  await sweepRosterSyncs(testContext());
  expect(await syncRow(old)).toMatchObject({ status: "failed", error: expect.stringMatching(/24 hours/) });

  const third = await rosterLaunch([rosterMember("w-3")]);
  const dead = await lostSync(third.launch.id, third.tenant.institution.id, {
    leaseUntil: Date.now() + 600_000,
  });
  const dlq = await runQueue("lingua-lti-roster-dlq", [{ sync_id: dead, generation: 0 }]);
  expect(dlq.explicitAcks).toHaveLength(1);
  expect(await syncRow(dead)).toMatchObject({
    status: "failed",
    error: expect.stringMatching(/every attempt/),
  });
});
