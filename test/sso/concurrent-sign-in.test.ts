import { expect, it } from "vitest";
import { callJson } from "../helpers/api";
import { overtakenBy } from "../helpers/held-write";
import { membersPath, memberUpdates } from "../members/support";
import { codeOf, exchange, oidcTenant, person, signInThroughProvider } from "./oidc-browser";

/**
 * An SSO sign-in that another change of the member overtakes between its read and its write (its
 * callback held just before its batch): applied again to the member as the other change left it, so
 * that the events chain.
 */

it("a sign-in overtaken by a PATCH lands on the member as the PATCH left it, and its member.updated says so", async () => {
  const tenant = await oidcTenant({
    claimMapping: { email: "email", name: "name", groups: "groups", role: "role" },
  });
  const id = tenant.institution.id;
  const who = await person(tenant, { groups: ["Year 9"] });
  const invited = await callJson(membersPath(id), {
    token: tenant.admin.token,
    body: { email: who.email, name: "Invited Ada", role: "learner" },
  });
  expect(invited.res.status).toBe(201);
  const path = `${membersPath(id)}/${invited.body.id}`;

  // The callback reads the member and is held before its write, while an admin renames the member
  // and changes its groups.
  const { res } = await overtakenBy(
    (DB) => signInThroughProvider(tenant, who, { env: { DB } }),
    async () => {
      const patched = await callJson(path, {
        method: "PATCH",
        token: tenant.admin.token,
        body: { name: "Bea Second", groups: ["Chess club"] },
      });
      expect(patched.res.status, JSON.stringify(patched.body)).toBe(200);
    },
  );
  expect(res.status, await res.clone().text()).toBe(303);
  const session = await exchange(codeOf(res));
  expect(session.body.user).toMatchObject({ id: invited.body.id, name: "Ada Lovelace" });

  const after = (await callJson(path, { token: tenant.admin.token })).body;
  expect(after).toMatchObject({ status: "active", name: "Ada Lovelace", groups: ["Year 9"] });
  expect(after.last_active_at).not.toBeNull();
  expect(await memberUpdates(id, invited.body.id)).toEqual([
    { name: { from: "Invited Ada", to: "Bea Second" }, groups: { from: [], to: ["Chess club"] } },
    {
      status: { from: "invited", to: "active" },
      name: { from: "Bea Second", to: "Ada Lovelace" },
      groups: { from: ["Chess club"], to: ["Year 9"] },
    },
  ]);
});
