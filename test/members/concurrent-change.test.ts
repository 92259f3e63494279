import { env } from "cloudflare:test";
import { expect, it } from "vitest";
import { heldBeforeItsWrite } from "../helpers/held-write";
import { createTenant, freshIp } from "../helpers/tenants";
import { addMember, callJson, invitationToken, membersPath, outboxOf, uniqueEmail } from "./support";

it("two PATCHes of one member at once both land, and their member.updated events chain from and to", async () => {
  const tenant = await createTenant();
  const id = tenant.institution.id;
  const path = `${membersPath(id)}/${tenant.learner.id}`;
  const before = (await callJson(path, { token: tenant.admin.token })).body;
  const held = heldBeforeItsWrite(env.DB);

  // The first PATCH reads the member and is held before its write…
  const first = callJson(path, {
    method: "PATCH",
    token: tenant.admin.token,
    body: { name: "Ana First", groups: ["french"] },
    env: { DB: held.binding },
  });
  await held.held;
  // …while the second changes the name it read, and another field.
  const second = await callJson(path, {
    method: "PATCH",
    token: tenant.admin.token,
    body: { name: "Bea Second", external_id: "SIS-2" },
  });
  expect(second.res.status, JSON.stringify(second.body)).toBe(200);
  held.release();
  const firstDone = await first;
  expect(firstDone.res.status, JSON.stringify(firstDone.body)).toBe(200);

  // Both land: each field as its PATCH set it; the name both set is the one written last.
  const after = (await callJson(path, { token: tenant.admin.token })).body;
  expect(after).toMatchObject({ name: "Ana First", groups: ["french"], external_id: "SIS-2" });
  expect(firstDone.body).toEqual(after);

  // The events chain: the first PATCH's `from` is what the second left, not what it had read.
  const events = (await outboxOf(id, "member.updated")).filter((e) => e.user_id === tenant.learner.id);
  expect(events).toHaveLength(2);
  expect(events).toContainEqual(
    expect.objectContaining({
      changes: {
        name: { from: before.name, to: "Bea Second" },
        external_id: { from: before.external_id, to: "SIS-2" },
      },
    }),
  );
  expect(events).toContainEqual(
    expect.objectContaining({
      changes: {
        name: { from: "Bea Second", to: "Ana First" },
        groups: { from: before.groups, to: ["french"] },
      },
    }),
  );
});

it("a PATCH overtaken by a change of what it changes applies to the member as that left it", async () => {
  const tenant = await createTenant();
  const id = tenant.institution.id;
  const path = `${membersPath(id)}/${tenant.instructor.id}`;
  const held = heldBeforeItsWrite(env.DB);
  // Both ask for the same role: the first, overtaken, finds nothing left to change and emits nothing.
  const first = callJson(path, {
    method: "PATCH",
    token: tenant.admin.token,
    body: { role: "learner" },
    env: { DB: held.binding },
  });
  await held.held;
  const second = await callJson(path, {
    method: "PATCH",
    token: tenant.admin.token,
    body: { role: "learner" },
  });
  expect(second.res.status).toBe(200);
  held.release();
  const firstDone = await first;
  expect(firstDone.res.status, JSON.stringify(firstDone.body)).toBe(200);
  expect(firstDone.body.role).toBe("learner");
  const events = (await outboxOf(id, "member.updated")).filter((e) => e.user_id === tenant.instructor.id);
  expect(events.map((e) => e.changes)).toEqual([{ role: { from: "instructor", to: "learner" } }]);
});

async function invited(tenant: Awaited<ReturnType<typeof createTenant>>) {
  const created = await addMember(tenant.admin.token, tenant.institution.id, {
    email: uniqueEmail("inv"),
    name: "Ivy Invited",
  });
  expect(created.res.status).toBe(201);
  return { id: created.body.id as string, token: invitationToken(created.body.invitation_url) };
}

function accepting(token: string, binding: D1Database) {
  return callJson("/api/auth/accept-invitation", {
    body: { token, password: "a long passphrase 2026" },
    headers: { "CF-Connecting-IP": freshIp() },
    env: { DB: binding },
  });
}

it("an invitation's acceptance overtaken by a rename lands on the member as the rename left it", async () => {
  const tenant = await createTenant();
  const id = tenant.institution.id;
  const member = await invited(tenant);
  const held = heldBeforeItsWrite(env.DB);
  const acceptance = accepting(member.token, held.binding);
  await held.held;
  const renamed = await callJson(`${membersPath(id)}/${member.id}`, {
    method: "PATCH",
    token: tenant.admin.token,
    body: { name: "Ivy Renamed" },
  });
  expect(renamed.res.status).toBe(200);
  held.release();
  const accepted = await acceptance;
  expect(accepted.res.status, JSON.stringify(accepted.body)).toBe(200);
  expect(accepted.body.user).toMatchObject({ id: member.id, name: "Ivy Renamed" });
  const events = (await outboxOf(id, "member.updated")).filter((e) => e.user_id === member.id);
  expect(events.map((e) => e.changes)).toEqual([
    { name: { from: "Ivy Invited", to: "Ivy Renamed" } },
    { status: { from: "invited", to: "active" } },
  ]);
});

it("an invitation's acceptance overtaken by a suspension is refused, and says nothing changed", async () => {
  const tenant = await createTenant();
  const id = tenant.institution.id;
  const member = await invited(tenant);
  const held = heldBeforeItsWrite(env.DB);
  const acceptance = accepting(member.token, held.binding);
  await held.held;
  const suspended = await callJson(`${membersPath(id)}/${member.id}`, {
    method: "PATCH",
    token: tenant.admin.token,
    body: { status: "suspended" },
  });
  expect(suspended.res.status).toBe(200);
  held.release();
  const accepted = await acceptance;
  expect(accepted.res.status, JSON.stringify(accepted.body)).toBe(400);
  expect(accepted.body.code).toBe("invalid_invitation");
  const after = (await callJson(`${membersPath(id)}/${member.id}`, { token: tenant.admin.token })).body;
  expect(after.status).toBe("suspended");
  const events = (await outboxOf(id, "member.updated")).filter((e) => e.user_id === member.id);
  expect(events.map((e) => e.changes)).toEqual([{ status: { from: "invited", to: "suspended" } }]);
});
