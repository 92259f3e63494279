import { describe, expect, it } from "vitest";
import { createPlatformAdmin, createTenant } from "../helpers/tenants";
import { addMember, allMembers, callJson, membersPath, outboxOf, uniqueEmail, uploadCsv } from "./support";

const UNSAFE = "must not contain control characters or bidirectional formatting characters";
const CRLF = "\r\n";

/** A right-to-left override (makes "Ana\u202Efdp.exe" read "Anaexe.pdf"), a NUL and a BEL. */
const BAD = { rlo: "Ana\u202Efdp.exe", nul: "Ana\u0000Lima", bel: "Ana\u0007Lima" };

describe("people's and groups' names", () => {
  it("a member created with a control or bidi character in name, a group or external_id is 422 naming the field; nothing is stored", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const before = await allMembers(tenant.admin.token, id);
    const createdBefore = await outboxOf(id, "member.created");
    for (const [what, bad] of Object.entries(BAD)) {
      for (const [field, value, path] of [
        ["name", bad, "name"],
        ["groups", ["french", bad], "groups.1"],
        ["external_id", bad, "external_id"],
      ] as const) {
        const email = uniqueEmail("bad");
        const { res, body } = await addMember(tenant.admin.token, id, {
          email,
          name: "Ana Lima",
          [field]: value,
        });
        expect(res.status, `${what} in ${field}`).toBe(422);
        expect(res.headers.get("Content-Type")).toContain("application/problem+json");
        expect(body.code).toBe("validation_failed");
        expect(body.errors).toEqual([{ path, message: UNSAFE }]);
      }
    }
    expect(await allMembers(tenant.admin.token, id)).toEqual(before);
    expect(await outboxOf(id, "member.created")).toEqual(createdBefore);
  });

  it("a member patched with one is 422 naming the field and stays as it was", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const created = await addMember(tenant.admin.token, id, {
      email: uniqueEmail("ana"),
      name: "Ana Lima",
      external_id: "SIS-1",
      groups: ["french"],
    });
    expect(created.res.status).toBe(201);
    const path = `${membersPath(id)}/${created.body.id}`;
    const before = (await callJson(path, { token: tenant.admin.token })).body;
    for (const [what, bad] of Object.entries(BAD)) {
      for (const [field, value, errorPath] of [
        ["name", bad, "name"],
        ["groups", [bad], "groups.0"],
        ["external_id", bad, "external_id"],
      ] as const) {
        const { res, body } = await callJson(path, {
          method: "PATCH",
          token: tenant.admin.token,
          body: { [field]: value },
        });
        expect(res.status, `${what} in ${field}`).toBe(422);
        expect(body.errors).toEqual([{ path: errorPath, message: UNSAFE }]);
      }
    }
    expect((await callJson(path, { token: tenant.admin.token })).body).toEqual(before);
    expect(await outboxOf(id, "member.updated")).toEqual([]);
  });

  it("markup is text: kept as sent and answered as JSON", async () => {
    const tenant = await createTenant();
    const { res, body } = await addMember(tenant.admin.token, tenant.institution.id, {
      email: uniqueEmail("markup"),
      name: "<b>Ana</b> & Bo",
      groups: ["<i>7b</i>"],
    });
    expect(res.status, JSON.stringify(body)).toBe(201);
    expect(body).toMatchObject({ name: "<b>Ana</b> & Bo", groups: ["<i>7b</i>"] });
  });

  it("an institution's first admin with one in the name is 422 and no institution is made", async () => {
    const staff = await createPlatformAdmin();
    const slug = `names-${crypto.randomUUID().slice(0, 8)}`;
    const { res, body } = await callJson("/api/institutions", {
      token: staff.token,
      body: { name: "Names school", slug, admin: { email: uniqueEmail("adm"), name: BAD.rlo } },
    });
    expect(res.status).toBe(422);
    expect(body.errors).toEqual([{ path: "admin.name", message: UNSAFE }]);
    const list = await callJson(`/api/institutions?per_page=100`, { token: staff.token });
    expect(list.body.data.map((i: any) => i.slug)).not.toContain(slug);
  });

  it("an institution's name and branding display name with one are 422 naming the field and change nothing", async () => {
    const tenant = await createTenant();
    const path = `/api/institutions/${tenant.institution.id}`;
    const before = (await callJson(path, { token: tenant.admin.token })).body;
    for (const [body, errorPath] of [
      [{ name: BAD.rlo }, "name"],
      [{ branding: { display_name: BAD.bel } }, "branding.display_name"],
    ] as const) {
      const { res, body: problem } = await callJson(path, {
        method: "PATCH",
        token: tenant.admin.token,
        body,
      });
      expect(res.status).toBe(422);
      expect(problem.errors).toEqual([{ path: errorPath, message: UNSAFE }]);
    }
    expect((await callJson(path, { token: tenant.admin.token })).body).toEqual(before);
  });

  it("a bulk row with one in name, groups or external_id is rejected in the report and the dry run; the other rows are applied", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const [good, a, b, c, d] = ["good", "a", "b", "c", "d"].map((t) => uniqueEmail(t));
    const csv =
      `email,name,external_id,groups${CRLF}` +
      `${good},Good Row,G-1,french${CRLF}` +
      `${a},${BAD.rlo},A-1,french${CRLF}` +
      `${b},Bo Berg,B\u0000-1,french${CRLF}` +
      `${c},Cy Coe,C-1,french;7\u0007b${CRLF}` +
      `${d}\u202E,Di Dee,D-1,${CRLF}`;
    const expected = [
      [2, "created", []],
      [3, "rejected", [`name: ${UNSAFE}`]],
      [4, "rejected", [`external_id: ${UNSAFE}`]],
      [5, "rejected", [`groups: a group name ${UNSAFE}`]],
      [6, "rejected", [`email: ${UNSAFE}`]],
    ];
    const before = await allMembers(tenant.admin.token, id);
    const dry = await uploadCsv(tenant.admin.token, id, csv, "dry_run=true");
    expect(dry.res.status, JSON.stringify(dry.body)).toBe(200);
    expect(dry.body.rows.map((r: any) => [r.line, r.outcome, r.errors])).toEqual(expected);
    expect(await allMembers(tenant.admin.token, id)).toEqual(before);

    const real = await uploadCsv(tenant.admin.token, id, csv);
    expect(real.res.status, JSON.stringify(real.body)).toBe(200);
    expect(real.body.counts).toMatchObject({ created: 1, rejected: 4 });
    expect(real.body.rows.map((r: any) => [r.line, r.outcome, r.errors])).toEqual(expected);
    const after = await allMembers(tenant.admin.token, id);
    expect(after.filter((m) => !before.some((x) => x.id === m.id)).map((m) => [m.email, m.name])).toEqual([
      [good, "Good Row"],
    ]);
  });

  it("a bulk row without a name takes its address's local part, held to a name's 200 characters", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const local = `l${"x".repeat(229)}`;
    const email = `${local}@${uniqueEmail("long").split("@")[1]}`;
    const upload = await uploadCsv(tenant.admin.token, id, `email,role${CRLF}${email},learner${CRLF}`);
    expect(upload.res.status, JSON.stringify(upload.body)).toBe(200);
    expect(upload.body.counts).toMatchObject({ created: 1 });
    const member = (await allMembers(tenant.admin.token, id)).find((m) => m.email === email);
    expect(member.name).toBe(local.slice(0, 200));
  });

  it("a bulk row names an existing member's unsafe change as a row error and leaves the member alone", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const update = await uploadCsv(
      tenant.admin.token,
      id,
      `email,first_name,last_name${CRLF}${tenant.learner.email},Le\u202Earner,X${CRLF}`,
    );
    expect(update.res.status, JSON.stringify(update.body)).toBe(200);
    expect(update.body.rows.map((r: any) => [r.outcome, r.errors])).toEqual([
      ["rejected", [`name: ${UNSAFE}`]],
    ]);
    const learner = (await allMembers(tenant.admin.token, id)).find((m) => m.id === tenant.learner.id);
    expect(learner.name).toBe("Test learner");
  });
});
