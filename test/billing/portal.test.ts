import { describe, expect, it } from "vitest";
import type { createPortalSessionRoute } from "../../src/domains/billing/routes/create-portal-session";
import { callJson, type ResponseBody } from "../helpers/api";
import { portalAction } from "../helpers/stripe";
import { mintToken } from "../helpers/tenants";
import { APP, billingAccount, freeTenant, startCheckout } from "./support";

type Portal = ResponseBody<typeof createPortalSessionRoute, 201>;

describe("POST /api/billing/portal-session", () => {
  it("answers 409 no_billing_account before the institution has a Stripe customer", async () => {
    const tenant = await freeTenant();
    const { res, body } = await callJson("/api/billing/portal-session", {
      token: tenant.admin.token,
      body: { return_url: `${APP}/billing` },
    });
    expect(res.status).toBe(409);
    expect(body.code).toBe("no_billing_account");
  });

  it("opens Stripe's portal for the institution's customer, good for five minutes, stored nowhere", async () => {
    const tenant = await freeTenant();
    await startCheckout(tenant);
    const before = Date.now();
    const { res, body } = await callJson<Portal>("/api/billing/portal-session", {
      token: tenant.admin.token,
      body: { return_url: `${APP}/billing` },
      headers: { "Idempotency-Key": crypto.randomUUID() },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    expect(body.url).toMatch(/\/portal\/bps_/);
    const expires = Date.parse(body.expires_at);
    expect(expires).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 299_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 301_000);
    // The portal's back link goes where we said.
    const back = await portalAction(body.url, { action: "return" });
    expect(back.location).toBe(`${APP}/billing`);
    // Nothing is replayed: a second call is a second session.
    const second = await callJson<Portal>("/api/billing/portal-session", {
      token: tenant.admin.token,
      body: { return_url: `${APP}/billing` },
    });
    expect(second.body.url).not.toBe(body.url);
    expect((await billingAccount(tenant.institution.id))?.stripeCustomerId).toMatch(/^cus_/);
  });

  it("refuses a return URL off the allowed origins", async () => {
    const tenant = await freeTenant();
    await startCheckout(tenant);
    for (const return_url of ["https://evil.example/", "javascript:alert(1)", "http://app.example.test/"]) {
      const { res, body } = await callJson("/api/billing/portal-session", {
        token: tenant.admin.token,
        body: { return_url },
      });
      expect(res.status, return_url).toBe(422);
      expect(body.errors[0].path).toBe("return_url");
    }
  });

  it("is for institution admins with billing:write", async () => {
    const tenant = await freeTenant();
    const reader = await mintToken(tenant.admin, ["billing:read"]);
    for (const token of [tenant.learner.token, tenant.instructor.token, reader.token]) {
      const { res } = await callJson("/api/billing/portal-session", {
        token,
        body: { return_url: `${APP}/` },
      });
      expect(res.status).toBe(403);
    }
  });
});
