import { expect, it } from "vitest";
import { overtakenBy } from "../helpers/held-write";
import { createTenant, freshIp, type Tenant } from "../helpers/tenants";
import { addMember, callJson, invitationToken, membersPath, memberUpdates, uniqueEmail } from "./support";

/**
 * A member change that another change of the member overtakes between its read and its write (held
 * just before its batch, `overtakenBy`): applied again to the member as the other left it, so that
 * the `member.updated` events chain. The members API's PATCH and an invitation's acceptance here;
 * SSO sign-ins, SCIM group changes and bulk uploads beside their own tests.
 */

/** A PATCH of `path` as the tenant's admin, with `bindings` when given. */
function patch(tenant: Tenant, path: string, body: Record<string, unknown>, DB?: D1Database) {
  return callJson(path, { method: "PATCH", token: tenant.admin.token, body, ...(DB ? { env: { DB } } : {}) });
}

it("two PATCHes of one member at once both land, and their member.updated events chain from and to", async () => {
  const tenant = await createTenant();
  const id = tenant.institution.id;
  const path = `${membersPath(id)}/${tenant.learner.id}`;
  const before = (await callJson(path, { token: tenant.admin.token })).body;

  // The first PATCH reads the member and is held before its write, while the second changes the
  // name it read, and another field.
  const first = await overtakenBy(
    (DB) => patch(tenant, path, { name: "Ana First", groups: ["french"] }, DB),
    async () => {
      const second = await patch(tenant, path, { name: "Bea Second", external_id: "SIS-2" });
      expect(second.res.status, JSON.stringify(second.body)).toBe(200);
    },
  );
  expect(first.res.status, JSON.stringify(first.body)).toBe(200);

  // Both land: each field as its PATCH set it; the name both set is the one written last.
  const after = (await callJson(path, { token: tenant.admin.token })).body;
  expect(after).toMatchObject({ name: "Ana First", groups: ["french"], external_id: "SIS-2" });
  expect(first.body).toEqual(after);

  // The events chain: the first PATCH's `from` is what the second left, not what it had read.
  expect(await memberUpdates(id, tenant.learner.id)).toEqual([
    { name: { from: before.name, to: "Bea Second" }, external_id: { from: before.external_id, to: "SIS-2" } },
    { name: { from: "Bea Second", to: "Ana First" }, groups: { from: before.groups, to: ["french"] } },
  ]);
});

it("a PATCH overtaken by a change of what it changes applies to the member as that left it", async () => {
  const tenant = await createTenant();
  const id = tenant.institution.id;
  const path = `${membersPath(id)}/${tenant.instructor.id}`;
  // Both ask for the same role: the first, overtaken, finds nothing left to change and emits nothing.
  const first = await overtakenBy(
    (DB) => patch(tenant, path, { role: "learner" }, DB),
    async () => expect((await patch(tenant, path, { role: "learner" })).res.status).toBe(200),
  );
  expect(first.res.status, JSON.stringify(first.body)).toBe(200);
  expect(first.body.role).toBe("learner");
  expect(await memberUpdates(id, tenant.instructor.id)).toEqual([
    { role: { from: "instructor", to: "learner" } },
  ]);
});

/**
 * An invited member's acceptance of its invitation, overtaken by the admin's PATCH `meanwhile`:
 * the acceptance's answer, and the member's `member.updated` events.
 */
async function acceptanceOvertakenBy(meanwhile: Record<string, unknown>) {
  const tenant = await createTenant();
  const created = await addMember(tenant.admin.token, tenant.institution.id, {
    email: uniqueEmail("inv"),
    name: "Ivy Invited",
  });
  expect(created.res.status).toBe(201);
  const memberId = created.body.id as string;
  const path = `${membersPath(tenant.institution.id)}/${memberId}`;
  const accepted = await overtakenBy(
    (DB) =>
      callJson("/api/auth/accept-invitation", {
        body: { token: invitationToken(created.body.invitation_url), password: "a long passphrase 2026" },
        headers: { "CF-Connecting-IP": freshIp() },
        env: { DB },
      }),
    async () => expect((await patch(tenant, path, meanwhile)).res.status).toBe(200),
  );
  const member = (await callJson(path, { token: tenant.admin.token })).body;
  return { accepted, member, changes: await memberUpdates(tenant.institution.id, memberId) };
}

it("an invitation's acceptance overtaken by a rename lands on the member as the rename left it", async () => {
  const { accepted, member, changes } = await acceptanceOvertakenBy({ name: "Ivy Renamed" });
  expect(accepted.res.status, JSON.stringify(accepted.body)).toBe(200);
  expect(accepted.body.user).toMatchObject({ id: member.id, name: "Ivy Renamed" });
  expect(member.status).toBe("active");
  expect(changes).toEqual([
    { name: { from: "Ivy Invited", to: "Ivy Renamed" } },
    { status: { from: "invited", to: "active" } },
  ]);
});

it("an invitation's acceptance overtaken by a suspension is refused, and says nothing changed", async () => {
  const { accepted, member, changes } = await acceptanceOvertakenBy({ status: "suspended" });
  expect(accepted.res.status, JSON.stringify(accepted.body)).toBe(400);
  expect(accepted.body.code).toBe("invalid_invitation");
  expect(member.status).toBe("suspended");
  expect(changes).toEqual([{ status: { from: "invited", to: "suspended" } }]);
});

it("a race test whose request never reaches its write fails rather than pass without the race", async () => {
  let overtook = false;
  const answered = overtakenBy(
    async () => "answered without writing",
    async () => {
      overtook = true;
    },
  );
  await expect(answered).rejects.toThrow(/finished without reaching its write/);
  expect(overtook).toBe(false);
});
