import { env } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { outboxEvents } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { createPlatformAdmin, createTenant, mintToken } from "../helpers/tenants";
import { acceptInvitation, call, callJson, INSTITUTIONS, invitationToken, uniqueEmail } from "./support";

describe("institutions", () => {
  it("lets platform staff create one with its first admin, who accepts the invitation", async () => {
    const staff = await createPlatformAdmin();
    const adminEmail = uniqueEmail("head");
    const name = `Écola Ünïted ${Date.now()}`;
    const { res, body } = await callJson(INSTITUTIONS, {
      token: staff.token,
      body: {
        name,
        plan: "enterprise",
        rate_limit_per_minute: 5000,
        seats: 250,
        branding: {
          display_name: "Ecola",
          logo_url: "https://cdn.ecola.example/logo.svg",
          primary_color: "#1A73E8",
        },
        locale: "pt-br",
        time_zone: "America/Sao_Paulo",
        admin: { email: adminEmail, name: "Head Teacher" },
      },
    });
    expect(res.status, JSON.stringify(body)).toBe(201);
    expect(body).toMatchObject({
      slug: expect.stringMatching(/^ecola-united-\d+$/),
      name,
      plan: "enterprise",
      rate_limit_per_minute: 5000,
      seats: 250,
      member_count: 1,
      branding: {
        display_name: "Ecola",
        logo_url: "https://cdn.ecola.example/logo.svg",
        primary_color: "#1A73E8",
        accent_color: null,
      },
      locale: "pt-BR",
      time_zone: "America/Sao_Paulo",
    });
    const session = await acceptInvitation(invitationToken(body.admin.invitation_url));
    expect(session.res.status).toBe(200);
    expect(session.body.user).toMatchObject({ role: "institution_admin", institution_id: body.id });
    const own = await callJson(INSTITUTIONS, { token: session.body.token });
    expect(own.body.data.map((i: any) => i.id)).toEqual([body.id]);

    const taken = await callJson(INSTITUTIONS, {
      token: staff.token,
      body: { name: "Other", slug: body.slug },
    });
    expect(taken.res.status).toBe(409);
    expect(taken.body.code).toBe("slug_taken");
  });

  it("validates branding, locale, time zone and the Enterprise-only limit", async () => {
    const staff = await createPlatformAdmin();
    const { res, body } = await callJson(INSTITUTIONS, {
      token: staff.token,
      body: {
        name: "Bad",
        plan: "pro",
        rate_limit_per_minute: 10,
        branding: { logo_url: "http://x.example/l.png", primary_color: "blue" },
        locale: "not a locale",
        time_zone: "Mars/Olympus",
      },
    });
    expect(res.status).toBe(422);
    expect(body.errors.map((e: any) => e.path).sort()).toEqual([
      "branding.logo_url",
      "branding.primary_color",
      "locale",
      "time_zone",
    ]);
    const limit = await callJson(INSTITUTIONS, {
      token: staff.token,
      body: { name: "Pro", plan: "pro", rate_limit_per_minute: 10 },
    });
    expect(limit.res.status).toBe(422);
    expect(limit.body.errors[0].path).toBe("rate_limit_per_minute");
  });

  it("keeps creation to platform staff and lists institutions by who asks", async () => {
    const tenant = await createTenant();
    const staff = await createPlatformAdmin();
    const refused = await callJson(INSTITUTIONS, { token: tenant.admin.token, body: { name: "Mine" } });
    expect(refused.res.status).toBe(403);
    const mine = await callJson(INSTITUTIONS, { token: tenant.instructor.token });
    expect(mine.body.data.map((i: any) => i.id)).toEqual([tenant.institution.id]);
    expect(mine.body.meta.total).toBe(1);
    const found = await callJson(`${INSTITUTIONS}?q=${tenant.institution.slug}&plan=pro`, {
      token: staff.token,
    });
    expect(found.body.data.map((i: any) => i.id)).toEqual([tenant.institution.id]);
    expect(found.body.data[0]).toMatchObject({ member_count: 3, rate_limit_per_minute: 1000, seats: null });
    expect((await call(INSTITUTIONS, { token: tenant.learner.token })).status).toBe(403);
  });

  it("lets an admin change name, branding, locale and time zone, and only staff the plan", async () => {
    const tenant = await createTenant();
    const staff = await createPlatformAdmin();
    const path = `${INSTITUTIONS}/${tenant.institution.id}`;
    const changed = await callJson(path, {
      method: "PATCH",
      token: tenant.admin.token,
      body: { name: "Renamed", branding: { accent_color: "#00ff00" }, time_zone: "Europe/Berlin" },
    });
    expect(changed.res.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body).toMatchObject({
      name: "Renamed",
      time_zone: "Europe/Berlin",
      branding: { accent_color: "#00ff00" },
    });
    const cleared = await callJson(path, {
      method: "PATCH",
      token: tenant.admin.token,
      body: { branding: { accent_color: null } },
    });
    expect(cleared.body.branding.accent_color).toBeNull();
    const plan = await callJson(path, {
      method: "PATCH",
      token: tenant.admin.token,
      body: { plan: "enterprise" },
    });
    expect(plan.res.status).toBe(403);
    expect(plan.body.detail).toMatch(/`plan`/);
    const instructor = await callJson(path, {
      method: "PATCH",
      token: tenant.instructor.token,
      body: { name: "X" },
    });
    expect(instructor.res.status).toBe(403);
    const readOnly = await mintToken(tenant.admin, ["institutions:read"]);
    const narrow = await callJson(path, { method: "PATCH", token: readOnly.token, body: { name: "X" } });
    expect(narrow.res.status).toBe(403);
    expect(narrow.body.code).toBe("missing_ability");
    const other = await createTenant();
    expect(
      (
        await callJson(`${INSTITUTIONS}/${other.institution.id}`, {
          method: "PATCH",
          token: tenant.admin.token,
          body: { name: "X" },
        })
      ).res.status,
    ).toBe(404);
    expect(
      (await callJson(path, { method: "PATCH", token: staff.token, body: { seats: 10 } })).body.seats,
    ).toBe(10);
  });

  it("applies a plan or limit change to every token of the institution on its next request", async () => {
    const tenant = await createTenant({ plan: "free" });
    const staff = await createPlatformAdmin();
    const apiToken = await mintToken(tenant.learner, ["content:read"]);
    const before = await call("/api/auth/me", { token: apiToken.token });
    expect(before.headers.get("X-RateLimit-Limit")).toBe("100");
    expect((await call("/api/auth/me", { token: tenant.admin.token })).headers.get("X-RateLimit-Limit")).toBe(
      "100",
    );
    const path = `${INSTITUTIONS}/${tenant.institution.id}`;
    const up = await callJson(path, {
      method: "PATCH",
      token: staff.token,
      body: { plan: "enterprise", rate_limit_per_minute: 4321 },
    });
    expect(up.res.status, JSON.stringify(up.body)).toBe(200);
    expect(up.body.rate_limit_per_minute).toBe(4321);
    const after = await callJson("/api/auth/me", { token: apiToken.token });
    expect(after.res.headers.get("X-RateLimit-Limit")).toBe("4321");
    expect(after.body.plan).toBe("enterprise");
    expect((await call("/api/auth/me", { token: tenant.admin.token })).headers.get("X-RateLimit-Limit")).toBe(
      "4321",
    );
    const down = await callJson(path, { method: "PATCH", token: staff.token, body: { plan: "pro" } });
    expect(down.body).toMatchObject({ plan: "pro", rate_limit_per_minute: 1000 });
    expect((await call("/api/auth/me", { token: apiToken.token })).headers.get("X-RateLimit-Limit")).toBe(
      "1000",
    );
  });

  it("writes the first admin's member.created event with the institution, and publishes it", async () => {
    const staff = await createPlatformAdmin();
    const { res, body } = await callJson(INSTITUTIONS, {
      token: staff.token,
      body: { name: `Evented ${Date.now()}`, admin: { email: uniqueEmail("first"), name: "First Admin" } },
    });
    expect(res.status, JSON.stringify(body)).toBe(201);
    // Read where it was placed (the least full database: design/multi-database.md).
    const events = () =>
      database(env[body.database as "DB" | "DB_1"])
        .select()
        .from(outboxEvents)
        .where(and(eq(outboxEvents.institutionId, body.id), eq(outboxEvents.type, "member.created")));
    const [event, ...more] = await events();
    expect(more).toEqual([]);
    expect(event?.payload).toMatchObject({
      user_id: body.admin.id,
      role: "institution_admin",
      status: "invited",
    });
    // Handed to the events queue after the batch: the dispatcher marks it, no sweep needed.
    for (const until = Date.now() + 10_000; (await events())[0]?.dispatchedAt == null; ) {
      if (Date.now() > until) throw new Error("member.created was not dispatched");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  it("lets staff change plan, limit or seats only with institutions:write besides members:write", async () => {
    const tenant = await createTenant();
    const staff = await createPlatformAdmin();
    const path = `${INSTITUTIONS}/${tenant.institution.id}`;
    const membersOnly = await mintToken(staff, ["members:write"]);
    const renamed = await callJson(path, {
      method: "PATCH",
      token: membersOnly.token,
      body: { name: "Staff Renamed" },
    });
    expect(renamed.res.status, JSON.stringify(renamed.body)).toBe(200);
    const seats = await callJson(path, { method: "PATCH", token: membersOnly.token, body: { seats: 5 } });
    expect(seats.res.status).toBe(403);
    expect(seats.body).toMatchObject({
      code: "missing_ability",
      detail: expect.stringContaining("`institutions:write`"),
    });
    const both = await mintToken(staff, ["members:write", "institutions:write"]);
    const changed = await callJson(path, { method: "PATCH", token: both.token, body: { seats: 5 } });
    expect(changed.res.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body.seats).toBe(5);
    const unknown = await callJson(`${INSTITUTIONS}/ins_no_such`, {
      method: "PATCH",
      token: both.token,
      body: { seats: 5 },
    });
    expect(unknown.res.status).toBe(404);
  });
});
