import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { scimUserAttributes, users } from "../../src/db/schema";
import { attributesAsRead, listsEmail } from "../../src/domains/scim/sql";
import entra from "../fixtures/scim/entra-validator.json";
import okta from "../fixtures/scim/okta-spec-test.json";
import { callJson } from "../helpers/api";
import { createPlatformAdmin } from "../helpers/tenants";
import { type Fixture, play } from "./fixtures";
import {
  db,
  ENTERPRISE,
  ERROR_SCHEMA,
  outboxOf,
  PATCH_OP,
  scim,
  scimTenant,
  USER_SCHEMA,
  uniqueEmail,
} from "./support";

function filterPath(expression: string) {
  return `/Users?filter=${encodeURIComponent(expression)}`;
}

async function createUser(token: string, fields: Record<string, unknown> = {}) {
  const email = uniqueEmail();
  const { res, body } = await scim("/Users", {
    token,
    body: {
      schemas: [USER_SCHEMA],
      userName: email,
      name: { givenName: "Ana", familyName: "Lima" },
      ...fields,
    },
  });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

function patch(token: string, id: string, Operations: unknown[]) {
  return scim(`/Users/${id}`, { token, method: "PATCH", body: { schemas: [PATCH_OP], Operations } });
}

describe("SCIM Users: the IdPs' validators", () => {
  it("passes Okta's SCIM 2.0 spec and CRUD tests", async () => {
    const { scimToken } = await scimTenant();
    const userName = uniqueEmail("runscope");
    await play(okta as Fixture, scimToken, {
      userName,
      userNameCaps: userName.toUpperCase(),
      invalidUserName: uniqueEmail("invalid"),
      externalId: `00u${Date.now()}`,
      missingId: "usr_010000000000000000000000000",
    });
  });

  it("passes Microsoft Entra's validator scenarios", async () => {
    const { scimToken } = await scimTenant();
    await play(entra as Fixture, scimToken, {
      userName: uniqueEmail("test_user"),
      otherEmail: uniqueEmail("updatedEmail"),
      newUserName: uniqueEmail("renamed"),
      externalId: crypto.randomUUID(),
      groupExternalId: crypto.randomUUID(),
      groupName: `Group ${crypto.randomUUID()}`,
      newGroupName: `Group ${crypto.randomUUID()} updated`,
    });
  });
});

describe("SCIM Users: members", () => {
  it("creates an active member with the members API's event, visible in the members API", async () => {
    const { tenant, scimToken } = await scimTenant();
    const user = await createUser(scimToken, { externalId: "HR-1" });
    const member = await callJson(`/api/institutions/${tenant.institution.id}/members/${user.id}`, {
      token: tenant.admin.token,
    });
    expect(member.body).toMatchObject({
      email: user.userName,
      name: "Ana Lima",
      role: "learner",
      status: "active",
      external_id: "HR-1",
    });
    const created = await outboxOf(tenant.institution.id, "member.created");
    expect(created.find((e) => e.user_id === user.id)).toMatchObject({
      email: user.userName,
      status: "active",
      external_id: "HR-1",
    });
    // The members the API made are Users too.
    const admin = await scim(`/Users/${tenant.admin.id}`, { token: scimToken });
    expect(admin.body).toMatchObject({ userName: tenant.admin.email, active: true });
  });

  it("suspends on active false and revokes the member's tokens on the next request", async () => {
    const { tenant, scimToken } = await scimTenant();
    const user = await scim(`/Users/${tenant.learner.id}`, { token: scimToken });
    expect((await callJson("/api/auth/me", { token: tenant.learner.token })).res.status).toBe(200);
    const off = await patch(scimToken, user.body.id, [{ op: "Replace", path: "active", value: "False" }]);
    expect(off.res.status, JSON.stringify(off.body)).toBe(200);
    expect(off.body.active).toBe(false);
    expect((await callJson("/api/auth/me", { token: tenant.learner.token })).res.status).toBe(401);
    const updated = await outboxOf(tenant.institution.id, "member.updated");
    expect(updated.at(-1)).toMatchObject({
      user_id: tenant.learner.id,
      changes: { status: { from: "active", to: "suspended" } },
    });
    const listed = await scim(filterPath("active eq false"), { token: scimToken });
    expect(listed.body.Resources.map((u: any) => u.id)).toEqual([tenant.learner.id]);
  });

  it("shows a new name and e-mail on the member's tokens at once (GET /api/auth/me)", async () => {
    const { tenant, scimToken } = await scimTenant();
    const me = async () => (await callJson("/api/auth/me", { token: tenant.learner.token })).body.user;
    const before = await me();
    const renamed = await patch(scimToken, tenant.learner.id, [
      { op: "replace", path: "name", value: { givenName: "Beatriz", familyName: "Okafor" } },
    ]);
    expect(renamed.res.status, JSON.stringify(renamed.body)).toBe(200);
    const member = await callJson(`/api/institutions/${tenant.institution.id}/members/${tenant.learner.id}`, {
      token: tenant.admin.token,
    });
    expect(member.body.name).not.toBe(before.name);
    expect((await me()).name).toBe(member.body.name);

    const email = uniqueEmail("moved");
    const moved = await patch(scimToken, tenant.learner.id, [
      { op: "replace", path: "userName", value: email },
    ]);
    expect(moved.res.status, JSON.stringify(moved.body)).toBe(200);
    expect((await me()).email).toBe(email.toLowerCase());
  });

  it("refuses to deactivate or delete the last active admin, in SCIM's error schema", async () => {
    const { tenant, scimToken } = await scimTenant();
    const off = await patch(scimToken, tenant.admin.id, [{ op: "replace", value: { active: false } }]);
    expect(off.res.status).toBe(409);
    expect(off.body).toMatchObject({ schemas: [ERROR_SCHEMA], status: "409" });
    expect(off.body.detail).toMatch(/admin/);
    const deleted = await scim(`/Users/${tenant.admin.id}`, { token: scimToken, method: "DELETE" });
    expect(deleted.res.status).toBe(409);
    expect((await callJson("/api/auth/me", { token: tenant.admin.token })).res.status).toBe(200);
  });

  it("holds the seat limit: a new active member or a reactivation needs a seat", async () => {
    const { tenant, scimToken } = await scimTenant();
    await callJson(`/api/institutions/${tenant.institution.id}`, {
      method: "PATCH",
      token: (await createPlatformAdmin()).token,
      body: { seats: 3 },
    });
    const full = await scim("/Users", {
      token: scimToken,
      body: { schemas: [USER_SCHEMA], userName: uniqueEmail() },
    });
    expect(full.res.status).toBe(409);
    expect(full.body.detail).toMatch(/seat/);
    // A suspended member takes no seat.
    const suspended = await createUser(scimToken, { active: false });
    expect(suspended.active).toBe(false);
    const back = await patch(scimToken, suspended.id, [{ op: "replace", path: "active", value: true }]);
    expect(back.res.status).toBe(409);
    expect(back.body.detail).toMatch(/seat/);
  });

  it("removes the member on DELETE, as the members API does, with member.removed", async () => {
    const { tenant, scimToken } = await scimTenant();
    const user = await createUser(scimToken, { externalId: "HR-9" });
    const gone = await scim(`/Users/${user.id}`, { token: scimToken, method: "DELETE" });
    expect(gone.res.status).toBe(204);
    const member = await callJson(`/api/institutions/${tenant.institution.id}/members/${user.id}`, {
      token: tenant.admin.token,
    });
    expect(member.res.status).toBe(404);
    const removed = await outboxOf(tenant.institution.id, "member.removed");
    expect(removed.filter((e) => e.user_id === user.id)).toHaveLength(1);
    expect((await scim(`/Users/${user.id}`, { token: scimToken, method: "DELETE" })).res.status).toBe(404);
    // Its external id is free again.
    const someoneElse = await createUser(scimToken, { externalId: "HR-9" });
    expect(someoneElse.externalId).toBe("HR-9");
  });

  it("provisions a person it deleted again as the same user; another institution's directory cannot", async () => {
    const { tenant, scimToken } = await scimTenant();
    const other = await scimTenant();
    const user = await createUser(scimToken, { externalId: "E-1" });
    expect((await scim(`/Users/${user.id}`, { token: scimToken, method: "DELETE" })).res.status).toBe(204);
    const elsewhere = await scim("/Users", {
      token: other.scimToken,
      body: { schemas: [USER_SCHEMA], userName: user.userName },
    });
    expect(elsewhere.res.status).toBe(409);
    expect(elsewhere.body.scimType).toBe("uniqueness");
    const back = await scim("/Users", {
      token: scimToken,
      body: {
        schemas: [USER_SCHEMA],
        userName: user.userName,
        name: { formatted: "Ana Back" },
        externalId: "E-2",
      },
    });
    expect(back.res.status, JSON.stringify(back.body)).toBe(201);
    expect(back.body).toMatchObject({
      id: user.id,
      userName: user.userName,
      externalId: "E-2",
      active: true,
    });
    expect(back.body.name).toEqual({ formatted: "Ana Back" });
    const created = (await outboxOf(tenant.institution.id, "member.created")).filter(
      (e) => e.user_id === user.id,
    );
    expect(created).toHaveLength(2);
    const again = await scim("/Users", {
      token: scimToken,
      body: { schemas: [USER_SCHEMA], userName: user.userName },
    });
    expect(again.res.status).toBe(409);
  });

  it("changes the e-mail on a new userName (409 uniqueness when it is taken)", async () => {
    const { tenant, scimToken } = await scimTenant();
    const user = await createUser(scimToken);
    const taken = await patch(scimToken, user.id, [
      { op: "replace", path: "userName", value: tenant.admin.email },
    ]);
    expect(taken.res.status).toBe(409);
    expect(taken.body.scimType).toBe("uniqueness");
    const email = uniqueEmail("Renamed");
    const renamed = await patch(scimToken, user.id, [{ op: "replace", path: "userName", value: email }]);
    expect(renamed.body.userName).toBe(email.toLowerCase());
    const updated = await outboxOf(tenant.institution.id, "member.updated");
    expect(updated.at(-1).changes.email).toEqual({ from: user.userName, to: email.toLowerCase() });
  });

  it("applies PATCH value filters and remove on multi-valued attributes", async () => {
    const { scimToken } = await scimTenant();
    const home = uniqueEmail("home");
    const user = await createUser(scimToken);
    const added = await patch(scimToken, user.id, [
      { op: "add", path: "emails", value: [{ value: home, type: "home" }] },
    ]);
    expect(added.res.status, JSON.stringify(added.body)).toBe(200);
    expect(added.body.emails).toEqual([
      { value: user.userName, type: "work", primary: true },
      { value: home, type: "home" },
    ]);
    const found = await scim(filterPath(`emails.value eq "${home.toUpperCase()}"`), { token: scimToken });
    expect(found.body.Resources.map((u: any) => u.id)).toEqual([user.id]);
    const removed = await patch(scimToken, user.id, [{ op: "remove", path: 'emails[type eq "home"]' }]);
    expect(removed.body.emails).toEqual([{ value: user.userName, type: "work", primary: true }]);
    // Entra replaces `emails[type eq "work"].value` on users that have no such address: it is added.
    const upsert = await patch(scimToken, user.id, [
      { op: "replace", path: 'emails[type eq "other"].value', value: home },
    ]);
    expect(upsert.body.emails).toContainEqual({ type: "other", value: home });
    const noTarget = await patch(scimToken, user.id, [
      { op: "remove", path: 'emails[type eq "mobile"].value' },
    ]);
    expect(noTarget.res.status).toBe(400);
    expect(noTarget.body.schemas).toEqual([ERROR_SCHEMA]);
  });

  it("applies two concurrent PATCHes of different attributes without losing either", async () => {
    const { scimToken } = await scimTenant();
    const user = await createUser(scimToken);
    const [a, b, c] = await Promise.all([
      patch(scimToken, user.id, [{ op: "replace", path: "name.givenName", value: "Beatriz" }]),
      patch(scimToken, user.id, [{ op: "replace", path: "externalId", value: "HR-77" }]),
      patch(scimToken, user.id, [{ op: "add", path: `${ENTERPRISE}:department`, value: "Sales" }]),
    ]);
    expect([a.res.status, b.res.status, c.res.status]).toEqual([200, 200, 200]);
    const after = await scim(`/Users/${user.id}`, { token: scimToken });
    expect(after.body).toMatchObject({
      name: { givenName: "Beatriz", familyName: "Lima" },
      externalId: "HR-77",
      [ENTERPRISE]: { department: "Sales" },
    });
  });

  it("makes the department a group when the institution says so", async () => {
    const { tenant, scimToken } = await scimTenant();
    await callJson(`/api/institutions/${tenant.institution.id}/scim`, {
      method: "PUT",
      token: tenant.admin.token,
      body: { department_as_group: true },
    });
    const user = await createUser(scimToken, { [ENTERPRISE]: { department: "Sales" } });
    const membersPath = `/api/institutions/${tenant.institution.id}/members/${user.id}`;
    expect((await callJson(membersPath, { token: tenant.admin.token })).body.groups).toEqual(["Sales"]);
    await patch(scimToken, user.id, [
      { op: "replace", path: `${ENTERPRISE}:department`, value: "Marketing" },
    ]);
    expect((await callJson(membersPath, { token: tenant.admin.token })).body.groups).toEqual(["Marketing"]);
  });

  it("lists with startIndex and count, in creation order", async () => {
    const { tenant, scimToken } = await scimTenant();
    const page = await scim("/Users?startIndex=2&count=1", { token: scimToken });
    expect(page.body).toMatchObject({ totalResults: 3, startIndex: 2, itemsPerPage: 1 });
    const all = await scim("/Users?count=500", { token: scimToken });
    expect(all.body.itemsPerPage).toBe(3);
    const ids = all.body.Resources.map((u: any) => u.id);
    expect(ids).toContain(tenant.instructor.id);
    expect(page.body.Resources[0].id).toBe(ids[1]);
    const none = await scim("/Users?count=0", { token: scimToken });
    expect(none.body).toMatchObject({ totalResults: 3, itemsPerPage: 0, Resources: [] });
    const only = await scim(`/Users/${tenant.learner.id}?attributes=userName,name.givenName`, {
      token: scimToken,
    });
    expect(Object.keys(only.body).sort()).toEqual(["id", "meta", "name", "schemas", "userName"]);
    const without = await scim(`/Users?excludedAttributes=emails,groups`, { token: scimToken });
    expect(without.body.Resources[0]).not.toHaveProperty("emails");
    expect(without.body.Resources[0]).toHaveProperty("userName");
  });

  it("answers filters it does not support, and bad bodies, with SCIM errors", async () => {
    const { scimToken } = await scimTenant();
    const sw = await scim(filterPath('userName sw "a"'), { token: scimToken });
    expect(sw.res.status).toBe(400);
    expect(sw.body).toMatchObject({ schemas: [ERROR_SCHEMA], status: "400", scimType: "invalidFilter" });
    const broken = await scim(filterPath('userName eq "a" and ('), { token: scimToken });
    expect(broken.body.scimType).toBe("invalidFilter");
    const typeOnly = await scim(filterPath('emails[type eq "work"]'), { token: scimToken });
    expect(typeOnly.body.scimType).toBe("invalidFilter");
    const title = await scim(filterPath('title eq "x"'), { token: scimToken });
    expect(title.body.scimType).toBe("invalidFilter");
    const noName = await scim("/Users", { token: scimToken, body: { schemas: [USER_SCHEMA] } });
    expect(noName.res.status).toBe(400);
    expect(noName.body.scimType).toBe("invalidValue");
    const notEmail = await scim("/Users", { token: scimToken, body: { userName: "jdoe" } });
    expect(notEmail.body.scimType).toBe("invalidValue");
    const notJson = await scim("/Users", {
      token: scimToken,
      method: "POST",
      headers: { "Content-Type": "application/scim+json" },
      body: undefined,
    });
    expect(notJson.res.status).toBe(400);
    const xml = await scim("/Users", { token: scimToken, body: {}, headers: { "Content-Type": "text/xml" } });
    expect(xml.res.status).toBe(415);
    const badOp = await patch(scimToken, "usr_x", [{ op: "move", path: "userName" }]);
    expect(badOp.res.status).toBe(400);
    const user = await createUser(scimToken);
    const readOnly = await patch(scimToken, user.id, [{ op: "replace", path: "groups", value: [] }]);
    expect(readOnly.res.status).toBe(400);
    expect(readOnly.body.scimType).toBe("mutability");
    const notBoolean = await patch(scimToken, user.id, [{ op: "replace", path: "active", value: "maybe" }]);
    expect(notBoolean.body.scimType).toBe("invalidValue");
    expect((await scim(`/Users/${user.id}`, { token: scimToken })).body.active).toBe(true);
    const method = await scim("/Users", { token: scimToken, method: "DELETE" });
    expect(method.res.status).toBe(405);
    expect(method.res.headers.get("Allow")).toBe("GET, POST");
  });

  it("describes itself: ServiceProviderConfig, ResourceTypes, Schemas", async () => {
    const { scimToken } = await scimTenant();
    const config = await scim("/ServiceProviderConfig", { token: scimToken });
    expect(config.body).toMatchObject({
      patch: { supported: true },
      bulk: { supported: false },
      filter: { supported: true, maxResults: 100 },
    });
    const types = await scim("/ResourceTypes", { token: scimToken });
    expect(types.body.Resources.map((t: any) => t.id)).toEqual(["User", "Group"]);
    const schemas = await scim("/Schemas", { token: scimToken });
    expect(schemas.body.Resources.map((s: any) => s.id)).toEqual([
      USER_SCHEMA,
      "urn:ietf:params:scim:schemas:core:2.0:Group",
      ENTERPRISE,
    ]);
    const user = schemas.body.Resources[0];
    expect(user.attributes.map((a: any) => a.name).sort()).toEqual([
      "active",
      "displayName",
      "emails",
      "groups",
      "name",
      "userName",
    ]);
    const one = await scim(`/Schemas/${ENTERPRISE}`, { token: scimToken });
    expect(one.body.attributes.map((a: any) => a.name)).toEqual(["department"]);
  });
});

describe("SCIM sql.ts", () => {
  it("listsEmail: a member one of whose addresses as sent is the address, in any case, in the institution only", async () => {
    const { tenant, scimToken } = await scimTenant();
    const other = await scimTenant();
    const home = uniqueEmail("Home");
    const user = await createUser(scimToken, {
      emails: [
        { value: uniqueEmail("work"), type: "work", primary: true },
        { value: home, type: "home" },
      ],
    });
    const found = (institutionId: string, address: string) =>
      db()
        .select({ id: users.id })
        .from(users)
        .where(and(eq(users.institutionId, institutionId), listsEmail(institutionId, address)))
        .all();
    expect(await found(tenant.institution.id, home.toUpperCase())).toEqual([{ id: user.id }]);
    expect(await found(tenant.institution.id, uniqueEmail())).toEqual([]);
    expect(await found(other.tenant.institution.id, home)).toEqual([]);
  });

  it("attributesAsRead: holds while the row is as read (or absent when none was read)", async () => {
    const { tenant, scimToken } = await scimTenant();
    const institutionId = tenant.institution.id;
    const user = await createUser(scimToken, { [ENTERPRISE]: { department: "Sales" } });
    const holds = async (read: Parameters<typeof attributesAsRead>[2], userId = user.id) => {
      const row = await db()
        .select({ ok: attributesAsRead(institutionId, userId, read) })
        .from(users)
        .limit(1)
        .get();
      return Boolean(row?.ok);
    };
    const [stored] = await db()
      .select()
      .from(scimUserAttributes)
      .where(eq(scimUserAttributes.userId, user.id))
      .all();
    const read = {
      givenName: stored?.givenName ?? null,
      familyName: stored?.familyName ?? null,
      emails: stored?.emails === null || stored?.emails === undefined ? null : JSON.stringify(stored.emails),
      department: stored?.department ?? null,
    };
    expect(read).toEqual({ givenName: "Ana", familyName: "Lima", emails: null, department: "Sales" });
    expect(await holds(read)).toBe(true);
    expect(await holds({ ...read, department: "Marketing" })).toBe(false);
    expect(await holds(null)).toBe(false);
    expect(await holds(null, tenant.learner.id)).toBe(true);
  });
});
