import { describe, expect, it } from "vitest";
import { callJson } from "../helpers/api";
import { receiverEndpoint } from "../helpers/receiver";
import { createPlatformAdmin, createTenant, type Tenant } from "../helpers/tenants";
import { Browser, csrfOf, textOf } from "./support";

const WEBHOOKS = "/dashboard/settings/integrations/webhooks";

async function signedInAdmin(tenant?: Tenant) {
  const t = tenant ?? (await createTenant());
  const browser = new Browser();
  expect((await browser.signIn(t.admin.email)).status).toBe(303);
  return { tenant: t, browser };
}

async function addThroughPage(browser: Browser, fields: Record<string, string | string[]>) {
  const csrf = await browser.csrfFor(`${WEBHOOKS}/new`);
  const res = await browser.post(WEBHOOKS, { _csrf: csrf, ...fields });
  const html = await res.text();
  return { res, html, secret: /id="secret"[^>]*value="(whsec_[^"]+)"/.exec(html)?.[1] };
}

async function hooksOf(tenant: Tenant) {
  const { body } = await callJson("/api/integrations/webhooks", { token: tenant.admin.token });
  return body.data as any[];
}

describe("dashboard: webhooks", () => {
  it("adds a webhook (secret shown once), pings it, shows the delivery log, redelivers, rotates and deletes", async () => {
    const { tenant, browser } = await signedInAdmin();
    expect(textOf(await (await browser.get(WEBHOOKS)).text())).toContain("No webhooks yet");
    const form = await (await browser.get(`${WEBHOOKS}/new`)).text();
    expect(textOf(form)).toContain("lesson.completed");
    expect(form).not.toContain('value="ping"');

    const receiver = receiverEndpoint();
    const added = await addThroughPage(browser, {
      url: receiver.url,
      description: "HR system",
      events: ["lesson.completed", "course.completed"],
      enabled: "true",
    });
    expect(added.res.status, added.html).toBe(201);
    expect(added.secret).toMatch(/^whsec_/);
    const [hook] = await hooksOf(tenant);
    expect(hook).toMatchObject({
      url: receiver.url,
      events: ["lesson.completed", "course.completed"],
      enabled: true,
    });
    await receiver.configure({ secrets: [added.secret!], fallback: { status: 200, body: "thanks" } });

    const detail = await browser.get(`${WEBHOOKS}/${hook.id}`);
    expect(detail.status).toBe(200);
    const detailHtml = await detail.text();
    expect(textOf(detailHtml)).toContain("No deliveries yet");

    const ping = await browser.post(`${WEBHOOKS}/${hook.id}/test`, { _csrf: csrfOf(detailHtml) });
    expect(ping.status).toBe(200);
    expect(textOf(await ping.text())).toContain("Your receiver answered 200: the ping succeeded.");
    const [received] = await receiver.waitFor(1);
    expect(received!.x_signature_valid).toEqual([true]);

    const log = textOf(await (await browser.get(`${WEBHOOKS}/${hook.id}`)).text());
    expect(log).toContain("ping");
    expect(log).toContain("succeeded");
    expect(log).toContain("thanks");
    const { body: deliveries } = await callJson(`/api/integrations/webhooks/${hook.id}/deliveries`, {
      token: tenant.admin.token,
    });
    const redeliver = await browser.post(
      `${WEBHOOKS}/${hook.id}/deliveries/${deliveries.data[0].id}/redeliver`,
      {
        _csrf: csrfOf(detailHtml),
      },
    );
    expect(redeliver.status).toBe(303);
    const after = await callJson(`/api/integrations/webhooks/${hook.id}/deliveries`, {
      token: tenant.admin.token,
    });
    expect(after.body.data[0].redelivery_of).toBe(deliveries.data[0].id);

    const rotated = await browser.post(`${WEBHOOKS}/${hook.id}/rotate`, {
      _csrf: csrfOf(detailHtml),
      previous_secret_ttl_seconds: "3600",
    });
    const rotatedHtml = await rotated.text();
    const secret = /id="secret"[^>]*value="(whsec_[^"]+)"/.exec(rotatedHtml)?.[1];
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(added.secret);
    const { body: rotatedHook } = await callJson(`/api/integrations/webhooks/${hook.id}`, {
      token: tenant.admin.token,
    });
    expect(rotatedHook.previous_secret_expires_at).not.toBeNull();

    const removed = await browser.post(`${WEBHOOKS}/${hook.id}/delete`, { _csrf: csrfOf(detailHtml) });
    expect(removed.status).toBe(303);
    expect(await hooksOf(tenant)).toEqual([]);
  });

  it("edits a webhook, and shows the API's refusals next to the form, changing nothing", async () => {
    const { tenant, browser } = await signedInAdmin();
    const receiver = receiverEndpoint();
    await addThroughPage(browser, { url: receiver.url, events: "*", enabled: "true" });
    const [hook] = await hooksOf(tenant);
    const csrf = await browser.csrfFor(`${WEBHOOKS}/${hook.id}`);

    const saved = await browser.post(`${WEBHOOKS}/${hook.id}`, {
      _csrf: csrf,
      url: receiver.url,
      description: "renamed",
      events: "member.created",
    });
    expect(saved.status).toBe(303);
    const [edited] = await hooksOf(tenant);
    expect(edited).toMatchObject({ description: "renamed", events: ["member.created"], enabled: false });

    for (const [fields, message] of [
      [{ url: "ftp://example.com/x", events: "*" }, "URL:"],
      [{ url: receiver.url }, "Events:"],
      [{ url: receiver.url, events: "no.such" }, "Events"],
    ] as const) {
      const refused = await browser.post(`${WEBHOOKS}/${hook.id}`, { _csrf: csrf, ...fields });
      expect([fields, refused.status]).toEqual([fields, 422]);
      expect(textOf(await refused.text())).toContain(message);
    }
    const refusedNew = await addThroughPage(browser, { url: "https://10.0.0.1/hook", events: "*" });
    expect(refusedNew.res.status).toBe(422);
    expect(refusedNew.secret).toBeUndefined();
    const [unchanged, ...others] = await hooksOf(tenant);
    expect(others).toEqual([]);
    expect(unchanged).toMatchObject({ description: "renamed", events: ["member.created"] });
  });

  it("recovers failed deliveries since a day, and names the field when the day is out of range", async () => {
    const { tenant, browser } = await signedInAdmin();
    await addThroughPage(browser, { url: receiverEndpoint().url, events: "*", enabled: "true" });
    const [hook] = await hooksOf(tenant);
    const csrf = await browser.csrfFor(`${WEBHOOKS}/${hook.id}`);
    const today = new Date().toISOString().slice(0, 10);
    const recovered = await browser.post(`${WEBHOOKS}/${hook.id}/recover`, { _csrf: csrf, since: today });
    expect(recovered.status).toBe(303);
    expect(recovered.headers.get("Location")).toBe(`${WEBHOOKS}/${hook.id}?notice=recovered&count=0`);
    expect(textOf(await (await browser.get(recovered.headers.get("Location")!)).text())).toContain(
      "0 failed events are queued for delivery again.",
    );
    for (const [since, message] of [
      ["2020-01-01", "Since: must be within the last 30 days"],
      ["2099-01-01", "Since: must not be in the future"],
      ["2026-02-30", "Since: must be a calendar day"],
    ] as const) {
      const refused = await browser.post(`${WEBHOOKS}/${hook.id}/recover`, { _csrf: csrf, since });
      expect([since, refused.status]).toEqual([since, 422]);
      expect(textOf(await refused.text())).toContain(message);
    }
    expect((await browser.post(`${WEBHOOKS}/${hook.id}/recover`, { since: today })).status).toBe(403);
  });

  it("refuses forms without the CSRF token, another institution's webhook, and platform staff", async () => {
    const { tenant, browser } = await signedInAdmin();
    const receiver = receiverEndpoint();
    await addThroughPage(browser, { url: receiver.url, events: "*", enabled: "true" });
    const [hook] = await hooksOf(tenant);
    expect((await browser.post(`${WEBHOOKS}/${hook.id}/delete`, {})).status).toBe(403);
    expect((await browser.post(WEBHOOKS, { url: receiver.url, events: "*" })).status).toBe(403);
    expect(await hooksOf(tenant)).toHaveLength(1);

    const other = await signedInAdmin();
    expect((await other.browser.get(`${WEBHOOKS}/${hook.id}`)).status).toBe(404);
    const csrf = await other.browser.csrfFor();
    expect((await other.browser.post(`${WEBHOOKS}/${hook.id}/delete`, { _csrf: csrf })).status).toBe(404);
    expect(await hooksOf(tenant)).toHaveLength(1);

    const staff = new Browser();
    await staff.signIn((await createPlatformAdmin()).email);
    const refused = await staff.get(WEBHOOKS);
    expect(refused.status).toBe(403);
    expect(textOf(await refused.text())).toContain("belongs to none");

    const learner = new Browser();
    learner.cookies.set("__Host-lingua_session", tenant.learner.token);
    for (const path of [WEBHOOKS, `${WEBHOOKS}/new`, `${WEBHOOKS}/${hook.id}`])
      expect([path, (await learner.get(path)).status]).toEqual([path, 403]);
  });
});
