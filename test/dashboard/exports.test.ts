import { describe, expect, it } from "vitest";
import { updateJob, waitForJob } from "../exports/support";
import { callJson } from "../helpers/api";
import { createTenant, type Tenant } from "../helpers/tenants";
import { Browser, csrfOf, textOf } from "./support";

const EXPORTS = "/dashboard/settings/integrations/exports";

async function signedInAdmin(tenant?: Tenant) {
  const t = tenant ?? (await createTenant());
  const browser = new Browser();
  expect((await browser.signIn(t.admin.email)).status).toBe(303);
  return { tenant: t, browser };
}

async function jobsOf(tenant: Tenant) {
  const { body } = await callJson("/api/integrations/exports", { token: tenant.admin.token });
  return body.data as any[];
}

describe("dashboard: exports", () => {
  it("requests an export, shows its status as JSON for the page's script, and downloads the CSV", async () => {
    const { tenant, browser } = await signedInAdmin();
    const empty = await (await browser.get(EXPORTS)).text();
    expect(textOf(empty)).toContain("No exports yet");
    const requested = await browser.post(EXPORTS, {
      _csrf: csrfOf(empty),
      type: "completions",
      from: "2026-01-01",
      to: "2026-12-31",
    });
    expect(requested.status).toBe(303);
    expect(requested.headers.get("Location")).toBe(`${EXPORTS}?notice=requested`);
    const [job] = await jobsOf(tenant);
    expect(job).toMatchObject({
      type: "completions",
      filters: { from: "2026-01-01T00:00:00Z", to: "2026-12-31T00:00:00Z" },
    });
    const done = await waitForJob(tenant.admin.token, job.id);
    expect(done.status).toBe("completed");

    const status = await browser.get(`${EXPORTS}/${job.id}/status`);
    expect(status.status).toBe(200);
    expect(await status.json()).toMatchObject({
      id: job.id,
      status: "completed",
      download: `${EXPORTS}/${job.id}/download`,
    });
    const list = await (await browser.get(EXPORTS)).text();
    expect(list).toContain(`href="${EXPORTS}/${job.id}/download"`);
    expect(list).not.toContain("data-export="); // nothing left to poll

    const file = await browser.get(`${EXPORTS}/${job.id}/download`);
    expect(file.status).toBe(200);
    expect(file.headers.get("Content-Type")).toBe("text/csv; charset=utf-8");
    expect(file.headers.get("Content-Disposition")).toMatch(/^attachment; filename="lingua-completions-/);
    expect((await file.text()).split("\r\n")[0]).toContain("user_id");
  });

  it("marks an open export for polling, refuses bad ranges with the field named, and keeps other institutions out", async () => {
    const { tenant, browser } = await signedInAdmin();
    const csrf = csrfOf(await (await browser.get(EXPORTS)).text());
    for (const [fields, message] of [
      [{ type: "activity", from: "2026-02-30" }, "From: must be a calendar day"],
      [{ type: "activity", from: "2026-05-01", to: "2026-04-01" }, "To: must be after from"],
      [{ type: "everything" }, "Type:"],
    ] as const) {
      const refused = await browser.post(EXPORTS, { _csrf: csrf, ...fields });
      expect([fields, refused.status]).toEqual([fields, 422]);
      expect(textOf(await refused.text())).toContain(message);
    }
    expect(await jobsOf(tenant)).toEqual([]);
    expect((await browser.post(EXPORTS, { type: "activity" })).status).toBe(403);
    expect(await jobsOf(tenant)).toEqual([]);

    const { body: job } = await callJson("/api/integrations/exports", {
      token: tenant.admin.token,
      body: { type: "activity" },
    });
    // An open export (set back to processing once generated, so nothing moves under the test) is
    // rendered for the page's script to poll, with the rows written so far.
    await waitForJob(tenant.admin.token, job.id);
    await updateJob(job.id, { status: "processing", progress: 7 });
    const page = await (await browser.get(EXPORTS)).text();
    expect(page).toContain(`data-export="${EXPORTS}/${job.id}/status"`);
    expect(textOf(page)).toContain("7 rows so far");
    expect(await (await browser.get(`${EXPORTS}/${job.id}/status`)).json()).toMatchObject({
      status: "processing",
      progress: 7,
      download: null,
    });
    expect((await browser.get(`${EXPORTS}/${job.id}/download`)).status).toBe(409);

    const other = await signedInAdmin();
    expect((await other.browser.get(`${EXPORTS}/${job.id}/status`)).status).toBe(404);
    expect((await other.browser.get(`${EXPORTS}/${job.id}/download`)).status).toBe(404);
    const learner = new Browser();
    learner.cookies.set("__Host-lingua_session", tenant.learner.token);
    expect((await learner.get(EXPORTS)).status).toBe(403);
    expect((await learner.get(`${EXPORTS}/${job.id}/download`)).status).toBe(403);
  });
});
