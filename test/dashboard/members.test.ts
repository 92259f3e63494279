import { describe, expect, it } from "vitest";
import { call, callJson } from "../helpers/api";
import { createPlatformAdmin, createTenant, type Tenant } from "../helpers/tenants";
import { Browser, csrfOf, textOf } from "./support";

const MEMBERS = "/dashboard/members";
const BULK = `${MEMBERS}/bulk`;

async function signedInAdmin(tenant?: Tenant) {
  const t = tenant ?? (await createTenant());
  const browser = new Browser();
  expect((await browser.signIn(t.admin.email)).status).toBe(303);
  return { tenant: t, browser };
}

async function membersOf(tenant: Tenant, query = "") {
  const { body } = await callJson(`/api/institutions/${tenant.institution.id}/members?per_page=100${query}`, {
    token: tenant.admin.token,
  });
  return body.data as any[];
}

async function memberByEmail(tenant: Tenant, email: string) {
  return (await membersOf(tenant)).find((m) => m.email === email);
}

async function invite(browser: Browser, fields: Record<string, string>) {
  const csrf = await browser.csrfFor(`${MEMBERS}/new`);
  const res = await browser.post(MEMBERS, { _csrf: csrf, ...fields });
  return { res, html: await res.text() };
}

const uniq = () => crypto.randomUUID().slice(0, 8);

describe("dashboard: members", () => {
  it("lists, searches and filters the institution's members, with empty states that say what to do", async () => {
    const { tenant, browser } = await signedInAdmin();
    const list = await browser.get(MEMBERS);
    expect(list.status).toBe(200);
    const text = textOf(await list.text());
    expect(text).toContain(tenant.learner.email);
    expect(text).toContain(tenant.instructor.email);
    expect(text).toContain("Invite member");

    const learners = textOf(await (await browser.get(`${MEMBERS}?role=learner`)).text());
    expect(learners).toContain(tenant.learner.email);
    expect(learners).not.toContain(tenant.instructor.email);
    expect(learners).toContain("Clear filters");

    const search = textOf(
      await (await browser.get(`${MEMBERS}?q=${encodeURIComponent(tenant.instructor.email)}`)).text(),
    );
    expect(search).toContain(tenant.instructor.email);
    expect(search).not.toContain(tenant.learner.email);

    const none = textOf(await (await browser.get(`${MEMBERS}?group=no-such-group`)).text());
    expect(none).toContain("No member matches these filters");

    const bad = await browser.get(`${MEMBERS}?role=emperor`);
    expect(bad.status).toBe(422);
    expect(textOf(await bad.text())).toContain("Role:");

    const past = textOf(await (await browser.get(`${MEMBERS}?page=9`)).text());
    expect(past).toContain("There is nothing on page 9");
  });

  it("invites a member: the API reads them invited, the invitation link is shown once and works", async () => {
    const { tenant, browser } = await signedInAdmin();
    const email = `new-${uniq()}@example.test`;
    const { res, html } = await invite(browser, {
      email,
      name: "Nia Novak",
      role: "instructor",
      groups: "Year 7, French",
      external_id: `HR-${uniq()}`,
    });
    expect(res.status, html).toBe(201);
    const url = /id="invitation-url"[^>]*value="([^"]+)"/.exec(html)?.[1]?.replace(/&amp;/g, "&");
    expect(url).toMatch(/\/dashboard\/accept-invitation\?token=inv_/);
    const member = await memberByEmail(tenant, email);
    expect(member).toMatchObject({
      name: "Nia Novak",
      role: "instructor",
      status: "invited",
      groups: ["French", "Year 7"],
    });
    // The link is the invitation page, where the person chooses a password.
    expect((await new Browser().get(new URL(url!).pathname + new URL(url!).search)).status).toBe(200);
  });

  it("shows validation errors and the service's refusals on the form, creating nothing", async () => {
    const { tenant, browser } = await signedInAdmin();
    const before = (await membersOf(tenant)).length;
    const bad = await invite(browser, { email: "not-an-address", name: "", role: "learner", groups: "" });
    expect(bad.res.status).toBe(422);
    const text = textOf(bad.html);
    expect(text).toContain("E-mail: must be an e-mail address");
    expect(text).toContain("Name:");
    expect(bad.html).toContain('value="not-an-address"');

    const taken = await invite(browser, {
      email: tenant.learner.email,
      name: "Twin",
      role: "learner",
      groups: "",
    });
    expect(taken.res.status).toBe(409);
    expect(textOf(taken.html)).toContain("already belongs to an account");
    expect((await membersOf(tenant)).length).toBe(before);
  });

  it("changes a role, suspends, reactivates and removes a member, as the API then reads", async () => {
    const { tenant, browser } = await signedInAdmin();
    const path = `${MEMBERS}/${tenant.learner.id}`;
    const detail = await browser.get(path);
    expect(detail.status).toBe(200);
    const csrf = csrfOf(await detail.text());

    const role = await browser.post(`${path}/role`, { _csrf: csrf, role: "instructor" });
    expect(role.status).toBe(303);
    expect(role.headers.get("Location")).toBe(`${path}?notice=role`);
    expect((await memberByEmail(tenant, tenant.learner.email)).role).toBe("instructor");

    expect((await browser.post(`${path}/status`, { _csrf: csrf, status: "suspended" })).status).toBe(303);
    expect((await memberByEmail(tenant, tenant.learner.email)).status).toBe("suspended");
    // A suspension revokes the member's tokens at once.
    expect((await call("/api/auth/me", { token: tenant.learner.token })).status).toBe(401);
    expect(textOf(await (await browser.get(`${path}?notice=suspended`)).text())).toContain(
      "Reactivate member",
    );

    expect((await browser.post(`${path}/status`, { _csrf: csrf, status: "active" })).status).toBe(303);
    expect((await memberByEmail(tenant, tenant.learner.email)).status).toBe("active");

    const removed = await browser.post(`${path}/remove`, { _csrf: csrf });
    expect(removed.status).toBe(303);
    expect(removed.headers.get("Location")).toBe(`${MEMBERS}?notice=removed`);
    expect(await memberByEmail(tenant, tenant.learner.email)).toBeUndefined();
    expect((await browser.get(path)).status).toBe(404);
  });

  it("shows the members rules' refusals on the member's page: the last admin, an invalid status", async () => {
    const { tenant, browser } = await signedInAdmin();
    const path = `${MEMBERS}/${tenant.admin.id}`;
    const csrf = csrfOf(await (await browser.get(path)).text());
    const demote = await browser.post(`${path}/role`, { _csrf: csrf, role: "learner" });
    expect(demote.status).toBe(409);
    expect(textOf(await demote.text())).toContain("without an active institution admin");
    const status = await browser.post(`${path}/status`, { _csrf: csrf, status: "deleted" });
    expect(status.status).toBe(422);
    expect((await memberByEmail(tenant, tenant.admin.email)).role).toBe("institution_admin");
  });

  it("refuses every members form without the session's CSRF token or from another origin: nothing changes", async () => {
    const { tenant, browser } = await signedInAdmin();
    const csrf = await browser.csrfFor(MEMBERS);
    const email = `csrf-${uniq()}@example.test`;
    const forged = await browser.post(MEMBERS, { _csrf: "forged", email, name: "X", role: "learner" });
    expect(forged.status).toBe(403);
    const crossSite = await browser.post(
      MEMBERS,
      { _csrf: csrf, email, name: "X", role: "learner" },
      { Origin: "https://evil.example" },
    );
    expect(crossSite.status).toBe(403);
    expect(await memberByEmail(tenant, email)).toBeUndefined();
    const path = `${MEMBERS}/${tenant.learner.id}`;
    expect((await browser.post(`${path}/status`, { _csrf: "forged", status: "suspended" })).status).toBe(403);
    expect((await browser.post(`${path}/remove`, { _csrf: "" })).status).toBe(403);
    expect((await memberByEmail(tenant, tenant.learner.email)).status).toBe("active");
    const upload = await browser.postFiles(
      BULK,
      { _csrf: "forged", dry_run: "false" },
      { file: { name: "m.csv", text: `email,name\r\n${email},X\r\n` } },
    );
    expect(upload.status).toBe(403);
    expect(await memberByEmail(tenant, email)).toBeUndefined();
  });

  it("answers another institution's member with 404 and changes nothing there", async () => {
    const { browser } = await signedInAdmin();
    const other = await createTenant();
    const path = `${MEMBERS}/${other.learner.id}`;
    expect((await browser.get(path)).status).toBe(404);
    const csrf = await browser.csrfFor(MEMBERS);
    expect((await browser.post(`${path}/status`, { _csrf: csrf, status: "suspended" })).status).toBe(404);
    expect((await memberByEmail(other, other.learner.email)).status).toBe("active");
  });

  it("asks platform staff to choose an institution first", async () => {
    const staff = await createPlatformAdmin();
    const browser = new Browser();
    await browser.signIn(staff.email);
    const res = await browser.get(MEMBERS);
    expect(res.status).toBe(409);
    expect(textOf(await res.text())).toContain("Choose an institution first");
  });

  for (const role of ["learner", "instructor"] as const) {
    it(`gives a ${role} no members page and no members form`, async () => {
      const tenant = await createTenant();
      const browser = new Browser();
      browser.cookies.set("__Host-lingua_session", tenant[role].token);
      for (const path of [MEMBERS, `${MEMBERS}/new`, BULK, `${MEMBERS}/${tenant.learner.id}`]) {
        expect([path, (await browser.get(path)).status]).toEqual([path, 403]);
      }
      const email = `sneaky-${uniq()}@example.test`;
      expect((await browser.post(MEMBERS, { _csrf: "x", email, name: "S", role: "learner" })).status).toBe(
        403,
      );
      expect(await memberByEmail(tenant, email)).toBeUndefined();
    });
  }
});

describe("dashboard: members bulk upload", () => {
  it("shows the dry run's report (counts, each row's problems) and changes nothing, then applies the same file", async () => {
    const { tenant, browser } = await signedInAdmin();
    const form = await browser.get(BULK);
    expect(form.status).toBe(200);
    const formHtml = await form.text();
    expect(formHtml).toContain('enctype="multipart/form-data"');
    const a = `ana-${uniq()}@example.test`;
    const b = `bo-${uniq()}@example.test`;
    const csv = `email,name,role,groups\r\n${a},Ana Lima,learner,Year 7;French\r\n${b},Bo Berg,instructor,\r\nnot-an-email,Bad Row,learner,\r\n`;
    const dry = await browser.postFiles(
      BULK,
      { _csrf: csrfOf(formHtml), dry_run: "true", mode: "upsert" },
      { file: { name: "members.csv", text: csv } },
    );
    const dryHtml = await dry.text();
    expect(dry.status, dryHtml).toBe(200);
    const dryText = textOf(dryHtml);
    expect(dryText).toContain("Dry run of a members upload");
    expect(dryText).toMatch(/2 would be created/);
    expect(dryText).toMatch(/1 rejected/);
    expect(dryText).toContain("not-an-email");
    expect(dryText).toMatch(/e-mail/i);
    expect(dryText).toContain("Apply");
    expect(await memberByEmail(tenant, a)).toBeUndefined();

    // "Apply" posts the file the page holds.
    const applyForm = /<form method="post" action="\/dashboard\/members\/bulk">([\s\S]*?)<\/form>/.exec(
      dryHtml,
    )![1]!;
    const fields: Record<string, string> = {};
    for (const m of applyForm.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g))
      fields[m[1]!] = m[2]!
        .replace(/&#10;/g, "\n")
        .replace(/&quot;/g, '"')
        .replace(/&amp;/g, "&");
    expect(fields.dry_run).toBe("false");
    const applied = await browser.post(BULK, fields);
    const appliedHtml = await applied.text();
    expect(applied.status, appliedHtml).toBe(201);
    expect(textOf(appliedHtml)).toMatch(/2 created/);
    expect(appliedHtml).toMatch(
      /id="invitation-\d+"[^>]*value="https:\/\/[^"]+\/dashboard\/accept-invitation\?token=inv_/,
    );
    expect(await memberByEmail(tenant, a)).toMatchObject({
      name: "Ana Lima",
      status: "invited",
      groups: ["French", "Year 7"],
    });
    expect(await memberByEmail(tenant, b)).toMatchObject({ role: "instructor" });

    // The upload's own page: the report, filterable, and the rejected rows as CSV.
    const jobId = /href="\/dashboard\/members\/bulk\/(blk_[^"/]+)"/.exec(appliedHtml)![1]!;
    const job = await browser.get(`${BULK}/${jobId}?outcome=rejected`);
    expect(job.status).toBe(200);
    const jobText = textOf(await job.text());
    expect(jobText).toContain("not-an-email");
    expect(jobText).not.toContain(a);
    const status = await browser.get(`${BULK}/${jobId}/status`);
    expect(await status.json()).toMatchObject({
      status: "completed",
      done: true,
      counts: { created: 2, rejected: 1 },
    });
    const rejected = await browser.get(`${BULK}/${jobId}/rejected.csv`);
    expect(rejected.status).toBe(200);
    expect(rejected.headers.get("Content-Type")).toContain("text/csv");
    const rejectedText = await rejected.text();
    expect(rejectedText).toContain("not-an-email");
    expect(rejectedText.split("\r\n")[0]).toBe("email,name,role,groups,line,reason");
  });

  it("refuses a file the members API refuses (no email column, nothing chosen) with the reason on the form", async () => {
    const { tenant, browser } = await signedInAdmin();
    const csrf = await browser.csrfFor(BULK);
    const before = (await membersOf(tenant)).length;
    const noEmail = await browser.postFiles(
      BULK,
      { _csrf: csrf, dry_run: "false" },
      { file: { name: "m.csv", text: "name\r\nAna\r\n" } },
    );
    expect(noEmail.status).toBe(422);
    expect(textOf(await noEmail.text())).toContain("CSV file:");
    const nothing = await browser.post(BULK, { _csrf: csrf, dry_run: "true" });
    expect(nothing.status).toBe(422);
    expect(textOf(await nothing.text())).toContain("CSV file: choose a file");
    expect((await membersOf(tenant)).length).toBe(before);
  });

  it("answers another institution's upload with 404", async () => {
    const { browser } = await signedInAdmin();
    const other = await createTenant();
    const res = await callJson(`/api/institutions/${other.institution.id}/members/bulk`, {
      token: other.admin.token,
      rawBody: "email,name\r\nx@example.test,X\r\n",
      headers: { "Content-Type": "text/csv" },
      method: "POST",
    } as any);
    const jobId = res.body.id as string;
    expect(jobId).toMatch(/^blk_/);
    expect((await browser.get(`${BULK}/${jobId}`)).status).toBe(404);
    expect((await browser.get(`${BULK}/${jobId}/status`)).status).toBe(404);
    expect((await browser.get(`${BULK}/${jobId}/rejected.csv`)).status).toBe(404);
  });
});
