import { describe, expect, it } from "vitest";
import oktaGroupPush from "../fixtures/scim/okta-group-push.json";
import { callJson } from "../helpers/api";
import { overtakenBy, renamedAtEveryWrite } from "../helpers/held-write";
import { type Fixture, play } from "./fixtures";
import {
  ERROR_SCHEMA,
  GROUP_SCHEMA,
  outboxOf,
  PATCH_OP,
  scim,
  scimTenant,
  USER_SCHEMA,
  uniqueEmail,
} from "./support";

async function createUser(token: string) {
  const { res, body } = await scim("/Users", {
    token,
    body: { schemas: [USER_SCHEMA], userName: uniqueEmail(), displayName: "Group Member" },
  });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(body)}`);
  return body.id as string;
}

async function createGroup(token: string, body: Record<string, unknown>) {
  return scim("/Groups", { token, body: { schemas: [GROUP_SCHEMA], ...body } });
}

function patchGroup(token: string, id: string, Operations: unknown[], bindings?: Partial<Cloudflare.Env>) {
  return scim(`/Groups/${id}`, {
    token,
    method: "PATCH",
    body: { schemas: [PATCH_OP], Operations },
    ...(bindings ? { env: bindings } : {}),
  });
}

async function groupsOf(tenant: { institution: { id: string }; admin: { token: string } }, userId: string) {
  const { body } = await callJson(`/api/institutions/${tenant.institution.id}/members/${userId}`, {
    token: tenant.admin.token,
  });
  return body.groups as string[];
}

describe("SCIM Groups", () => {
  it("passes Okta's Group Push operations", async () => {
    const { tenant, scimToken } = await scimTenant();
    const [first, second] = [await createUser(scimToken), await createUser(scimToken)];
    await play(oktaGroupPush as Fixture, scimToken, {
      groupName: `Okta ${crypto.randomUUID()}`,
      newGroupName: `Okta ${crypto.randomUUID()} renamed`,
      firstUserId: first,
      firstUserName: "Group Member",
      secondUserId: second,
      secondUserName: "Group Member",
    });
    expect(await groupsOf(tenant, first)).toEqual([]);
    expect(await groupsOf(tenant, second)).toEqual([]);
  });

  it("adds and removes members, as member groups, with a member.updated event each", async () => {
    const { tenant, scimToken } = await scimTenant();
    const [ana, ben] = [await createUser(scimToken), await createUser(scimToken)];
    const created = await createGroup(scimToken, { displayName: "Year 7", members: [{ value: ana }] });
    expect(created.res.status, JSON.stringify(created.body)).toBe(201);
    expect(created.res.headers.get("Location")).toBe(
      `https://api.lingua.test/scim/v2/Groups/${created.body.id}`,
    );
    expect(created.body.members).toEqual([
      { value: ana, display: "Group Member", $ref: `https://api.lingua.test/scim/v2/Users/${ana}` },
    ]);
    expect(await groupsOf(tenant, ana)).toEqual(["Year 7"]);
    const id = created.body.id;

    const added = await patchGroup(scimToken, id, [{ op: "add", path: "members", value: [{ value: ben }] }]);
    expect(added.res.status).toBe(204);
    expect(await groupsOf(tenant, ben)).toEqual(["Year 7"]);
    const removed = await patchGroup(scimToken, id, [{ op: "remove", path: `members[value eq "${ana}"]` }]);
    expect(removed.res.status).toBe(204);
    expect(await groupsOf(tenant, ana)).toEqual([]);

    const updated = (await outboxOf(tenant.institution.id, "member.updated")).map((e) => [
      e.user_id,
      e.changes,
    ]);
    expect(updated).toEqual([
      [ana, { groups: { from: [], to: ["Year 7"] } }],
      [ben, { groups: { from: [], to: ["Year 7"] } }],
      [ana, { groups: { from: ["Year 7"], to: [] } }],
    ]);
    // Adding a member twice, or removing one who is not in the group, changes nothing and tells nobody.
    await patchGroup(scimToken, id, [{ op: "add", path: "members", value: [{ value: ben }] }]);
    await patchGroup(scimToken, id, [{ op: "remove", path: "members", value: [{ value: ana }] }]);
    expect(await outboxOf(tenant.institution.id, "member.updated")).toHaveLength(3);

    const user = await scim(`/Users/${ben}`, { token: scimToken });
    expect(user.body.groups).toEqual([
      { value: id, display: "Year 7", $ref: `https://api.lingua.test/scim/v2/Groups/${id}` },
    ]);
  });

  it("adopts members who already have the group's name, renames and deletes the group on each member", async () => {
    const { tenant, scimToken } = await scimTenant();
    await callJson(`/api/institutions/${tenant.institution.id}/members/${tenant.learner.id}`, {
      method: "PATCH",
      token: tenant.admin.token,
      body: { groups: ["French"] },
    });
    const listed = await scim(`/Groups?filter=${encodeURIComponent('displayName eq "French"')}`, {
      token: scimToken,
    });
    expect(listed.body.totalResults).toBe(0);
    const created = await createGroup(scimToken, { displayName: "French", externalId: "okta-grp-1" });
    expect(created.body.members.map((m: any) => m.value)).toEqual([tenant.learner.id]);
    const id = created.body.id;

    const renamed = await patchGroup(scimToken, id, [
      { op: "Replace", value: { id, displayName: "French B1", externalId: "okta-grp-1" } },
    ]);
    expect(renamed.res.status, JSON.stringify(renamed.body)).toBe(204);
    expect(await groupsOf(tenant, tenant.learner.id)).toEqual(["French B1"]);

    const replaced = await scim(`/Groups/${id}`, {
      token: scimToken,
      method: "PUT",
      body: { schemas: [GROUP_SCHEMA], displayName: "French B1", members: [{ value: tenant.instructor.id }] },
    });
    expect(replaced.res.status).toBe(200);
    expect(replaced.body.members.map((m: any) => m.value)).toEqual([tenant.instructor.id]);
    expect(replaced.body.externalId).toBeUndefined();
    expect(await groupsOf(tenant, tenant.learner.id)).toEqual([]);

    const deleted = await scim(`/Groups/${id}`, { token: scimToken, method: "DELETE" });
    expect(deleted.res.status).toBe(204);
    expect(await groupsOf(tenant, tenant.instructor.id)).toEqual([]);
    const member = await scim(`/Users/${tenant.instructor.id}`, { token: scimToken });
    expect(member.res.status).toBe(200);
  });

  it("keeps both of two concurrent additions of different members", async () => {
    const { tenant, scimToken } = await scimTenant();
    const users = await Promise.all([createUser(scimToken), createUser(scimToken), createUser(scimToken)]);
    const { body: group } = await createGroup(scimToken, { displayName: "Concurrent" });
    const answers = await Promise.all(
      users.map((user) =>
        patchGroup(scimToken, group.id, [{ op: "add", path: "members", value: [{ value: user }] }]),
      ),
    );
    expect(answers.map((a) => a.res.status)).toEqual([204, 204, 204]);
    const after = await scim(`/Groups/${group.id}`, { token: scimToken });
    expect(after.body.members.map((m: any) => m.value).sort()).toEqual([...users].sort());
    for (const user of users) expect(await groupsOf(tenant, user)).toEqual(["Concurrent"]);
  });

  it("refuses unknown members, another institution's users and duplicate names in SCIM's error schema", async () => {
    const { scimToken } = await scimTenant();
    const other = await scimTenant();
    const stranger = await createUser(other.scimToken);
    const { body: group } = await createGroup(scimToken, { displayName: "Guarded" });
    const foreign = await patchGroup(scimToken, group.id, [
      { op: "add", path: "members", value: [{ value: stranger }] },
    ]);
    expect(foreign.res.status).toBe(400);
    expect(foreign.body).toMatchObject({ schemas: [ERROR_SCHEMA], status: "400", scimType: "invalidValue" });
    const duplicate = await createGroup(scimToken, { displayName: "Guarded" });
    expect(duplicate.res.status).toBe(409);
    expect(duplicate.body.scimType).toBe("uniqueness");
    const badPath = await patchGroup(scimToken, group.id, [{ op: "replace", path: "owner", value: "x" }]);
    expect(badPath.body.scimType).toBe("invalidPath");
    const noName = await createGroup(scimToken, {});
    expect(noName.body.scimType).toBe("invalidValue");
    const badFilter = await scim(`/Groups?filter=${encodeURIComponent('displayName co "Gu"')}`, {
      token: scimToken,
    });
    expect(badFilter.body.scimType).toBe("invalidFilter");
    expect((await scim(`/Groups/${group.id}`, { token: other.scimToken })).res.status).toBe(404);
    const listed = await scim("/Groups", { token: other.scimToken });
    expect(listed.body.totalResults).toBe(0);
  });

  it("a membership change overtaken by another change of the member applies to the member as that left it", async () => {
    const { tenant, scimToken } = await scimTenant();
    const userId = await createUser(scimToken);
    const group = await createGroup(scimToken, { displayName: "Chess" });
    expect(group.res.status).toBe(201);
    // The group's PATCH reads the member and is held before its write, while an admin sets the
    // member's groups.
    const add = [{ op: "add", path: "members", value: [{ value: userId }] }];
    const added = await overtakenBy(
      (DB) => patchGroup(scimToken, group.body.id, add, { DB }),
      async () => {
        const patched = await callJson(`/api/institutions/${tenant.institution.id}/members/${userId}`, {
          method: "PATCH",
          token: tenant.admin.token,
          body: { groups: ["French"] },
        });
        expect(patched.res.status).toBe(200);
      },
    );
    expect([200, 204], JSON.stringify(added.body)).toContain(added.res.status);
    expect(await groupsOf(tenant, userId)).toEqual(["Chess", "French"]);
    const events = (await outboxOf(tenant.institution.id, "member.updated")).filter(
      (e) => e.user_id === userId,
    );
    expect(events.map((e) => e.changes)).toEqual([
      { groups: { from: [], to: ["French"] } },
      { groups: { from: ["French"], to: ["Chess", "French"] } },
    ]);
  });

  it("a group rename lands while the directory renames one of its members at every attempt", async () => {
    const { tenant, scimToken } = await scimTenant();
    const userId = await createUser(scimToken);
    const created = await createGroup(scimToken, { displayName: "Chess", members: [{ value: userId }] });
    expect(created.res.status).toBe(201);
    const id = created.body.id;
    // Before each write of the rename, the member's name changes: not what a group change writes.
    const { binding: DB, renames } = renamedAtEveryWrite(userId);
    const renamed = await patchGroup(
      scimToken,
      id,
      [{ op: "Replace", value: { id, displayName: "Chess club" } }],
      {
        DB,
      },
    );
    expect(renamed.res.status, JSON.stringify(renamed.body)).toBe(204);
    expect(renames()).toBe(1);
    expect(await groupsOf(tenant, userId)).toEqual(["Chess club"]);
    const events = (await outboxOf(tenant.institution.id, "member.updated")).filter(
      (e) => e.user_id === userId,
    );
    expect(events.map((e) => e.changes)).toEqual([
      { groups: { from: [], to: ["Chess"] } },
      { groups: { from: ["Chess"], to: ["Chess club"] } },
    ]);
  });
});
