import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createPlatformAdmin, createTenant, mintToken, signIn } from "../helpers/tenants";
import {
  acceptInvitation,
  addMember,
  allMembers,
  call,
  callJson,
  invitationToken,
  membersPath,
  outboxOf,
  setSeats,
  uniqueEmail,
} from "./support";

describe("members", () => {
  it("creates an invited member with an invitation that signs them in once", async () => {
    const tenant = await createTenant();
    const email = uniqueEmail("Ana");
    const { res, body } = await addMember(tenant.admin.token, tenant.institution.id, {
      email,
      name: "Ana Lima",
      role: "instructor",
      external_id: "SIS-1",
      groups: ["class-7b", "french", "class-7b"],
    });
    expect(res.status, JSON.stringify(body)).toBe(201);
    expect(body).toMatchObject({
      email: email.toLowerCase(),
      name: "Ana Lima",
      role: "instructor",
      status: "invited",
      external_id: "SIS-1",
      groups: ["class-7b", "french"],
      last_active_at: null,
    });
    expect(res.headers.get("Location")).toBe(
      `https://api.lingua.test/api/institutions/${tenant.institution.id}/members/${body.id}`,
    );
    expect(body.invitation_url).toMatch(
      /^https:\/\/api\.lingua\.test\/dashboard\/accept-invitation\?token=inv_/,
    );

    // No usable password before the invitation is accepted.
    const before = await callJson("/api/auth/sign-in", {
      body: { email, password: "a long passphrase 2026" },
      headers: { "CF-Connecting-IP": "203.0.113.9" },
    });
    expect(before.res.status).toBe(401);

    const token = invitationToken(body.invitation_url);
    const accepted = await acceptInvitation(token);
    expect(accepted.res.status, JSON.stringify(accepted.body)).toBe(200);
    expect(accepted.body.user).toMatchObject({ id: body.id, role: "instructor" });
    const me = await callJson("/api/auth/me", { token: accepted.body.token });
    expect(me.res.status).toBe(200);

    const reinvite = await callJson(`/api/institutions/${tenant.institution.id}/invitations`, {
      token: tenant.admin.token,
      body: { member_id: body.id },
    });
    expect(reinvite.res.status).toBe(409);

    const again = await acceptInvitation(token);
    expect(again.res.status).toBe(400);
    expect(again.body.code).toBe("invalid_invitation");

    const member = await callJson(`${membersPath(tenant.institution.id)}/${body.id}`, {
      token: tenant.admin.token,
    });
    expect(member.body.status).toBe("active");
    const created = await outboxOf(tenant.institution.id, "member.created");
    expect(created).toContainEqual(
      expect.objectContaining({ user_id: body.id, email: email.toLowerCase(), role: "instructor" }),
    );
    const updated = await outboxOf(tenant.institution.id, "member.updated");
    expect(updated).toContainEqual(
      expect.objectContaining({ user_id: body.id, changes: { status: { from: "invited", to: "active" } } }),
    );
  });

  it("shows when a member was last active", async () => {
    const tenant = await createTenant();
    const path = `${membersPath(tenant.institution.id)}/${tenant.learner.id}`;
    const ctx = createExecutionContext();
    expect((await call("/api/auth/me", { token: tenant.learner.token, ctx })).status).toBe(200);
    await waitOnExecutionContext(ctx);
    const { body } = await callJson(path, { token: tenant.admin.token });
    expect(body.last_active_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    const sorted = await allMembers(tenant.admin.token, tenant.institution.id, "sort=-last_active_at");
    expect(sorted.map((m) => m.last_active_at === null)).toEqual([false, false, true]);
  });

  it("re-invites an invited member, voiding the previous invitation", async () => {
    const tenant = await createTenant();
    const { body } = await addMember(tenant.admin.token, tenant.institution.id, {
      email: uniqueEmail(),
      name: "Re",
    });
    const again = await callJson(`/api/institutions/${tenant.institution.id}/invitations`, {
      token: tenant.admin.token,
      body: { member_id: body.id },
    });
    expect(again.res.status).toBe(201);
    expect(again.body.invitation_url).not.toBe(body.invitation_url);
    expect((await acceptInvitation(invitationToken(body.invitation_url))).res.status).toBe(400);
    expect((await acceptInvitation(invitationToken(again.body.invitation_url))).res.status).toBe(200);
  });

  it("refuses an unknown invitation token", async () => {
    const { res, body } = await acceptInvitation("inv_nope");
    expect(res.status).toBe(400);
    expect(body.code).toBe("invalid_invitation");
  });

  it("keeps roles under the granter's and nobody makes a platform admin", async () => {
    const tenant = await createTenant();
    const platform = await createPlatformAdmin();
    const asAdmin = await addMember(tenant.admin.token, tenant.institution.id, {
      email: uniqueEmail(),
      name: "X",
      role: "platform_admin",
    });
    expect(asAdmin.res.status).toBe(422);
    const asStaff = await addMember(platform.token, tenant.institution.id, {
      email: uniqueEmail(),
      name: "X",
      role: "platform_admin",
    });
    expect(asStaff.res.status).toBe(422);
    const instructorWrites = await addMember(tenant.instructor.token, tenant.institution.id, {
      email: uniqueEmail(),
      name: "X",
    });
    expect(instructorWrites.res.status).toBe(403);
    expect(instructorWrites.body.code).toBe("missing_ability");
    const staffAdds = await addMember(platform.token, tenant.institution.id, {
      email: uniqueEmail(),
      name: "Staff-made admin",
      role: "institution_admin",
    });
    expect(staffAdds.res.status).toBe(201);
  });

  it("lets instructors read, never learners; another institution is 404", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    expect((await call(membersPath(tenant.institution.id), { token: tenant.instructor.token })).status).toBe(
      200,
    );
    expect((await call(membersPath(tenant.institution.id), { token: tenant.learner.token })).status).toBe(
      403,
    );
    for (const path of [
      membersPath(other.institution.id),
      `${membersPath(other.institution.id)}/${other.learner.id}`,
      `/api/institutions/${other.institution.id}`,
    ]) {
      const res = await call(path, { token: tenant.admin.token });
      expect(res.status, path).toBe(404);
    }
    // A member id of another institution under one's own institution: 404 as well.
    const cross = await call(`${membersPath(tenant.institution.id)}/${other.learner.id}`, {
      token: tenant.admin.token,
    });
    expect(cross.status).toBe(404);
    const patch = await callJson(`${membersPath(other.institution.id)}/${other.learner.id}`, {
      method: "PATCH",
      token: tenant.admin.token,
      body: { name: "x" },
    });
    expect(patch.res.status).toBe(404);
  });

  it("answers platform staff 404 for an institution that does not exist, and an empty page for one without members", async () => {
    const staff = await createPlatformAdmin();
    const missing = await callJson(membersPath("ins_does_not_exist"), { token: staff.token });
    expect(missing.res.status).toBe(404);
    expect(missing.res.headers.get("content-type")).toContain("application/problem+json");
    expect(missing.body).toMatchObject({ code: "not_found", detail: "No institution ins_does_not_exist." });
    const tenant = await createTenant();
    const filtered = await callJson(`${membersPath(tenant.institution.id)}?q=nobody-has-this-name`, {
      token: staff.token,
    });
    expect(filtered.res.status).toBe(200);
    expect(filtered.body).toMatchObject({ data: [], meta: { total: 0 } });
  });

  it("filters, searches and sorts the list", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    for (const [name, role, groups] of [
      ["Zoe Zed", "learner", ["b"]],
      ["Adam Alpha", "learner", ["a", "b"]],
      ["Mia Middle", "instructor", ["a"]],
    ] as const) {
      const { res } = await addMember(tenant.admin.token, id, { email: uniqueEmail(), name, role, groups });
      expect(res.status).toBe(201);
    }
    const names = (list: any[]) => list.map((m) => m.name);
    const all = await allMembers(tenant.admin.token, id);
    expect(names(all)).toEqual([
      "Adam Alpha",
      "Mia Middle",
      "Test institution_admin",
      "Test instructor",
      "Test learner",
      "Zoe Zed",
    ]);
    expect(names(await allMembers(tenant.admin.token, id, "group=a"))).toEqual(["Adam Alpha", "Mia Middle"]);
    expect(names(await allMembers(tenant.admin.token, id, "role=instructor"))).toEqual([
      "Mia Middle",
      "Test instructor",
    ]);
    expect(names(await allMembers(tenant.admin.token, id, "status=invited&q=zed"))).toEqual(["Zoe Zed"]);
    const newest = await allMembers(tenant.admin.token, id, "sort=-created_at");
    const expected = [...newest].sort((a, b) =>
      a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1,
    );
    expect(newest.map((m) => m.id)).toEqual(expected.map((m) => m.id));
    const bad = await callJson(`${membersPath(id)}?sort=email`, { token: tenant.admin.token });
    expect(bad.res.status).toBe(422);
  });

  it("suspends at once (401), demotes at once (403) and protects the last admin", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    // The instructor's session reads the list, then is demoted: the same session is 403 next time.
    expect((await call(membersPath(id), { token: tenant.instructor.token })).status).toBe(200);
    const demote = await callJson(`${membersPath(id)}/${tenant.instructor.id}`, {
      method: "PATCH",
      token: tenant.admin.token,
      body: { role: "learner" },
    });
    expect(demote.res.status, JSON.stringify(demote.body)).toBe(200);
    expect((await call(membersPath(id), { token: tenant.instructor.token })).status).toBe(403);
    const events = await outboxOf(id, "member.updated");
    expect(events).toContainEqual(
      expect.objectContaining({
        user_id: tenant.instructor.id,
        changes: { role: { from: "instructor", to: "learner" } },
      }),
    );

    const apiToken = await mintToken(tenant.learner, ["content:read"]);
    expect((await call("/api/auth/me", { token: apiToken.token })).status).toBe(200);
    const suspend = await callJson(`${membersPath(id)}/${tenant.learner.id}`, {
      method: "PATCH",
      token: tenant.admin.token,
      body: { status: "suspended" },
    });
    expect(suspend.res.status).toBe(200);
    expect((await call("/api/auth/me", { token: tenant.learner.token })).status).toBe(401);
    expect((await call("/api/auth/me", { token: apiToken.token })).status).toBe(401);
    await expect(signIn(tenant.learner.email)).rejects.toThrow(/401/);

    const lastAdmin = await callJson(`${membersPath(id)}/${tenant.admin.id}`, {
      method: "PATCH",
      token: tenant.admin.token,
      body: { role: "learner" },
    });
    expect(lastAdmin.res.status).toBe(409);
    expect(lastAdmin.body.code).toBe("last_admin");
    const removeLast = await call(`${membersPath(id)}/${tenant.admin.id}`, {
      method: "DELETE",
      token: tenant.admin.token,
    });
    expect(removeLast.status).toBe(409);
  });

  it("shows a new name on the member's sessions and tokens at once (GET /api/auth/me)", async () => {
    const tenant = await createTenant();
    const apiToken = await mintToken(tenant.learner, ["content:read"]);
    const me = async (token: string) => (await callJson("/api/auth/me", { token })).body.user;
    // Both tokens have read (and cached) who they belong to.
    expect((await me(tenant.learner.token)).name).not.toBe("Beatriz Lima");
    expect((await me(apiToken.token)).name).not.toBe("Beatriz Lima");
    const renamed = await callJson(`${membersPath(tenant.institution.id)}/${tenant.learner.id}`, {
      method: "PATCH",
      token: tenant.admin.token,
      body: { name: "Beatriz Lima" },
    });
    expect(renamed.res.status, JSON.stringify(renamed.body)).toBe(200);
    expect((await me(tenant.learner.token)).name).toBe("Beatriz Lima");
    expect((await me(apiToken.token)).name).toBe("Beatriz Lima");
  });

  it("removes a member and revokes every token it holds", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const apiToken = await mintToken(tenant.learner, ["content:read"]);
    expect((await call("/api/auth/me", { token: apiToken.token })).status).toBe(200);
    const res = await call(`${membersPath(id)}/${tenant.learner.id}`, {
      method: "DELETE",
      token: tenant.admin.token,
    });
    expect(res.status).toBe(204);
    expect((await call("/api/auth/me", { token: apiToken.token })).status).toBe(401);
    expect((await call("/api/auth/me", { token: tenant.learner.token })).status).toBe(401);
    const gone = await call(`${membersPath(id)}/${tenant.learner.id}`, { token: tenant.admin.token });
    expect(gone.status).toBe(404);
    expect(await outboxOf(id, "member.removed")).toContainEqual(
      expect.objectContaining({ user_id: tenant.learner.id }),
    );
  });

  it("counts invited and active members against seats, not suspended ones", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    await setSeats(tenant, 4);
    const fourth = await addMember(tenant.admin.token, id, { email: uniqueEmail(), name: "Fourth" });
    expect(fourth.res.status).toBe(201);
    const fifth = await addMember(tenant.admin.token, id, { email: uniqueEmail(), name: "Fifth" });
    expect(fifth.res.status).toBe(409);
    expect(fifth.body.code).toBe("seat_limit_reached");
    await callJson(`${membersPath(id)}/${fourth.body.id}`, {
      method: "PATCH",
      token: tenant.admin.token,
      body: { status: "suspended" },
    });
    const again = await addMember(tenant.admin.token, id, { email: uniqueEmail(), name: "Fifth" });
    expect(again.res.status).toBe(201);
    const reactivate = await callJson(`${membersPath(id)}/${fourth.body.id}`, {
      method: "PATCH",
      token: tenant.admin.token,
      body: { status: "active" },
    });
    expect(reactivate.res.status).toBe(409);
    expect(reactivate.body.code).toBe("seat_limit_reached");
  });

  it("refuses a taken e-mail and a taken external_id", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const id = tenant.institution.id;
    const taken = await addMember(tenant.admin.token, id, { email: other.learner.email, name: "X" });
    expect(taken.res.status).toBe(409);
    expect(taken.body.code).toBe("email_taken");
    expect(
      (await addMember(tenant.admin.token, id, { email: uniqueEmail(), name: "A", external_id: "E1" })).res
        .status,
    ).toBe(201);
    const dup = await addMember(tenant.admin.token, id, {
      email: uniqueEmail(),
      name: "B",
      external_id: "E1",
    });
    expect(dup.res.status).toBe(409);
    expect(dup.body.code).toBe("external_id_taken");
    // The same external_id in another institution is fine.
    expect(
      (
        await addMember(other.admin.token, other.institution.id, {
          email: uniqueEmail(),
          name: "C",
          external_id: "E1",
        })
      ).res.status,
    ).toBe(201);
  });
});
