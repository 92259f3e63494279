import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { ltiConsumers, ltiLaunches, users } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { isSafeForDisplay } from "../../src/platform/text";
import { callJson } from "../helpers/api";
import { createTenant } from "../helpers/tenants";
import { INSTRUCTOR_ROLE, LTI, launch, registerPlatform } from "./support";

async function storedName(userId: string): Promise<string | undefined> {
  const row = await database(env.DB)
    .select({ name: users.name })
    .from(users)
    .where(eq(users.id, userId))
    .get();
  return row?.name;
}

it("a launch whose name is 5,000 characters of markup and control characters succeeds with the name cleaned and cut to 200", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const unit = "<img src=x onerror=alert(1)>\u0000\u0007\u202E\n\t Ada ";
  const name = unit.repeat(Math.ceil(5_000 / unit.length)).slice(0, 5_000);
  expect(name.length).toBe(5_000);
  const { res, body } = await launch(reg, { name });
  expect(res.status, JSON.stringify(body)).toBe(200);
  expect(body.launch.status).toBe("succeeded");
  const cleaned = body.user.name as string;
  expect(cleaned.length).toBeLessThanOrEqual(200);
  expect(cleaned.length).toBeGreaterThan(150);
  expect(isSafeForDisplay(cleaned)).toBe(true);
  expect(cleaned.startsWith("<img src=x onerror=alert(1)> Ada <img src=x onerror=alert(1)> Ada")).toBe(true);
  expect(cleaned).not.toMatch(/\s{2}|^\s|\s$/);
  expect(await storedName(body.user.id)).toBe(cleaned);

  // The same person again, with a bidi override in given and family names only: the update is cleaned too.
  const again = await launch(reg, {
    sub: body.launch.sub,
    name: undefined,
    given_name: "\u202EAda\u0000",
    family_name: " King\u2066 ",
  });
  expect(again.res.status, JSON.stringify(again.body)).toBe(200);
  expect(again.body.user).toMatchObject({ id: body.user.id, name: "Ada King" });
  expect(await storedName(body.user.id)).toBe("Ada King");
});

it("a launch whose name has nothing left after cleaning is named 'LTI user'; an e-mail with a control character is not used", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const { res, body } = await launch(reg, {
    name: "\u202E\u0000 \u0007",
    given_name: "\u0001",
    family_name: undefined,
    email: "ada\u202E@lms.example",
  });
  expect(res.status, JSON.stringify(body)).toBe(200);
  expect(body.user.name).toBe("LTI user");
  expect(body.user.email).toMatch(/^lti-[0-9a-f]{24}@lti\.invalid$/);
});

it("a launch's course and link titles, label and description are cleaned and cut, not refused", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const title = `Spanish\u202E 101\u0000\n${"x".repeat(1_000)}`;
  const { res, body } = await launch(reg, {
    [`${LTI}context`]: { id: "ctx-1", label: "\u2066SPAN\u0007101", title, type: ["CourseOffering"] },
    [`${LTI}resource_link`]: {
      id: "rl-1",
      title: "\u202EWeek 1",
      description: "Line one\nLine\u0000 two\u202E",
    },
  });
  expect(res.status, JSON.stringify(body)).toBe(200);
  const { context, resource_link } = body.launch;
  expect(context.label).toBe("SPAN101");
  expect(context.title.startsWith("Spanish 101 xxx")).toBe(true);
  expect([...context.title].length).toBe(500);
  expect(isSafeForDisplay(context.title)).toBe(true);
  expect(context).toMatchObject({ id: "ctx-1", type: ["CourseOffering"] });
  expect(resource_link).toEqual({ id: "rl-1", title: "Week 1", description: "Line one\nLine two" });
  // Stored as answered.
  const row = await database(env.DB)
    .select({ context: ltiLaunches.context, resourceLink: ltiLaunches.resourceLink })
    .from(ltiLaunches)
    .where(eq(ltiLaunches.id, body.launch.id))
    .get();
  expect(row?.context).toEqual(context);
  expect(row?.resourceLink).toEqual(resource_link);
  // Nothing left after cleaning: the field is left out.
  const blank = await launch(reg, { [`${LTI}resource_link`]: { id: "rl-2", title: "\u202E\u0000 " } });
  expect(blank.res.status).toBe(200);
  expect(blank.body.launch.resource_link).toEqual({ id: "rl-2" });
});

it("a registration's name follows the display-text rule: control or bidi characters, or more than 200 characters, are a 422 naming it, and nothing is stored", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const count = () =>
    database(env.DB).$count(ltiConsumers, eq(ltiConsumers.institutionId, tenant.institution.id));
  for (const name of ["Canvas\u202E", "Can\u0000vas", "x".repeat(201), "  "]) {
    const created = await callJson("/api/integrations/lti-consumers", {
      token: tenant.admin.token,
      body: {
        name,
        issuer: reg.urls.issuer,
        client_id: `other-${crypto.randomUUID()}`,
        deployment_ids: ["d"],
        auth_login_url: reg.urls.auth_login_url,
        auth_token_url: reg.urls.auth_token_url,
        jwks_url: reg.urls.jwks_url,
      },
    });
    expect(created.res.status).toBe(422);
    expect(created.body.errors).toEqual([expect.objectContaining({ path: "name" })]);
    const updated = await callJson(`/api/integrations/lti-consumers/${reg.consumer.id}`, {
      token: tenant.admin.token,
      method: "PUT",
      body: { name },
    });
    expect(updated.res.status).toBe(422);
    expect(updated.body.errors).toEqual([expect.objectContaining({ path: "name" })]);
  }
  expect(await count()).toBe(1);
  const stored = await callJson(`/api/integrations/lti-consumers/${reg.consumer.id}`, {
    token: tenant.admin.token,
  });
  expect(stored.body.name).toBe("Test LMS");
});

it("a launch under a new name shows it at once on the person's earlier session (GET /api/auth/me)", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const first = await launch(reg, { name: "Ada Byron" });
  expect(first.res.status, JSON.stringify(first.body)).toBe(200);
  const me = async () => (await callJson("/api/auth/me", { token: first.body.session.token })).body.user;
  expect((await me()).name).toBe("Ada Byron");
  const again = await launch(reg, { sub: first.body.launch.sub, name: "Ada King" });
  expect(again.res.status, JSON.stringify(again.body)).toBe(200);
  expect((await me()).name).toBe("Ada King");
});

it("a relaunch under a new name, e-mail and role emits member.updated with each one's from and to; one that changes nothing emits none", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const [before, after] = [
    `ada.${crypto.randomUUID()}@lms.example`,
    `king.${crypto.randomUUID()}@lms.example`,
  ];
  const first = await launch(reg, { name: "Ada Byron", email: before });
  expect(first.res.status, JSON.stringify(first.body)).toBe(200);
  const sub = first.body.launch.sub;
  const now = { sub, name: "Ada King", email: after, [`${LTI}roles`]: [INSTRUCTOR_ROLE] };
  const again = await launch(reg, now);
  expect(again.res.status, JSON.stringify(again.body)).toBe(200);
  expect(again.body.user).toMatchObject({
    id: first.body.user.id,
    name: "Ada King",
    email: after,
    role: "instructor",
  });
  expect((await launch(reg, now)).res.status).toBe(200);

  // What an integrator following members sees (the events list; a webhook gets the same `data`).
  const events = await callJson("/api/integrations/events?type=member.updated", {
    token: tenant.admin.token,
  });
  expect(events.res.status).toBe(200);
  const theirs = events.body.data.filter((e: any) => e.data.user_id === first.body.user.id);
  expect(theirs).toEqual([
    {
      id: expect.any(String),
      type: "member.updated",
      created_at: expect.any(String),
      data: {
        user_id: first.body.user.id,
        changes: {
          name: { from: "Ada Byron", to: "Ada King" },
          email: { from: before, to: after },
          role: { from: "learner", to: "instructor" },
        },
        updated_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      },
    },
  ]);
});
