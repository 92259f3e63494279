import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { billingAccounts, users } from "../../src/db/schema";
import type { createCheckoutSessionRoute } from "../../src/domains/billing/routes/create-checkout-session";
import { database } from "../../src/platform/db";
import { callJson, type ResponseBody } from "../helpers/api";
import { createTestPromotionCode, payCheckout, STRIPE_PRICE_PRO_YEAR, stripeApi } from "../helpers/stripe";
import { createPlatformAdmin, createTenant, mintToken } from "../helpers/tenants";
import {
  APP,
  billingAccount,
  checkoutBody,
  freeTenant,
  recordSubscription,
  startCheckout,
  stripeSession,
} from "./support";

type Session = ResponseBody<typeof createCheckoutSessionRoute, 201>;
const DAY = 86_400;

describe("POST /api/billing/checkout-session", () => {
  it("opens a subscription-mode session for the institution's one customer, with a card-less 14-day trial", async () => {
    const tenant = await freeTenant();
    const { res, body } = await startCheckout(tenant);
    expect(res.status).toBe(201);
    const session = body as Session;
    expect(session.id).toMatch(/^cs_test_/);
    expect(session.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/checkout\/cs_test_/);
    expect(Date.parse(session.expires_at ?? "")).toBeGreaterThan(Date.now() + 23 * 3600_000);

    const account = await billingAccount(tenant.institution.id);
    expect(account?.stripeCustomerId).toMatch(/^cus_/);
    const customer = await stripeApi(`/v1/customers/${account?.stripeCustomerId}`);
    expect(customer.metadata).toMatchObject({ institution_id: tenant.institution.id });
    expect(customer.name).toMatch(/^Test institution /);

    const held = await stripeSession(session.id);
    expect(held).toMatchObject({
      mode: "subscription",
      customer: account?.stripeCustomerId,
      client_reference_id: tenant.institution.id,
      metadata: { institution_id: tenant.institution.id },
      payment_method_collection: "if_required",
      allow_promotion_codes: true,
      success_url: `${APP}/billing/done?session={CHECKOUT_SESSION_ID}`,
      cancel_url: `${APP}/billing`,
    });
    // The tenant's admin, instructor and learner: three seats by default.
    expect(held.line_items.data).toMatchObject([{ price: { id: "price_pro_month" }, quantity: 3 }]);

    // Paid card-less, as the customer would on Stripe's page: a trial of 14 days, the institution in its metadata.
    const paid = await payCheckout(session.url, { card: false });
    expect(paid.status).toBe(303);
    expect(paid.location).toBe(`${APP}/billing/done?session=${session.id}`);
    const completed = await stripeApi(`/v1/checkout/sessions/${session.id}`);
    const subscription = await stripeApi(`/v1/subscriptions/${completed.subscription}`);
    expect(subscription.status).toBe("trialing");
    expect(subscription.trial_end - subscription.trial_start).toBe(14 * DAY);
    // Without a card by the trial's end, Stripe cancels it rather than retrying a payment.
    expect(subscription.trial_settings).toMatchObject({ end_behavior: { missing_payment_method: "cancel" } });
    expect(subscription.metadata).toMatchObject({ institution_id: tenant.institution.id });
  });

  it("keeps one customer per institution: a second checkout reuses it, another institution gets its own", async () => {
    const [tenant, other] = await Promise.all([freeTenant(), freeTenant()]);
    const first = await startCheckout(tenant);
    const second = await startCheckout(tenant, { interval: "year", seats: 7 });
    const elsewhere = await startCheckout(other);
    expect([first.res.status, second.res.status, elsewhere.res.status]).toEqual([201, 201, 201]);
    const [a, b, c] = await Promise.all(
      [first, second, elsewhere].map(({ body }) => stripeSession((body as Session).id)),
    );
    expect(b.customer).toBe(a.customer);
    expect(c.customer).not.toBe(a.customer);
    expect(c.client_reference_id).toBe(other.institution.id);
    expect(b.line_items.data).toMatchObject([{ price: { id: STRIPE_PRICE_PRO_YEAR }, quantity: 7 }]);
  });

  it("creates one customer when the institution's first checkouts race", async () => {
    const tenant = await freeTenant();
    const results = await Promise.all([
      startCheckout(tenant, { seats: 4 }),
      startCheckout(tenant, { seats: 5 }),
      startCheckout(tenant, { seats: 6 }),
    ]);
    expect(results.map(({ res }) => res.status)).toEqual([201, 201, 201]);
    const sessions = await Promise.all(results.map(({ body }) => stripeSession((body as Session).id)));
    const account = await billingAccount(tenant.institution.id);
    expect(new Set(sessions.map((session) => session.customer))).toEqual(
      new Set([account?.stripeCustomerId]),
    );
  });

  it("replays the same session for the same Idempotency-Key, and for a double click without one", async () => {
    const tenant = await freeTenant();
    const key = { "Idempotency-Key": `checkout-${crypto.randomUUID()}` };
    const first = await startCheckout(tenant, {}, key);
    const replay = await startCheckout(tenant, {}, key);
    expect(first.res.status).toBe(201);
    expect(replay.res.status).toBe(201);
    expect(replay.res.headers.get("Idempotent-Replayed")).toBe("true");
    expect(replay.body).toEqual(first.body);

    const clicks = await Promise.all([
      startCheckout(tenant, { seats: 9 }),
      startCheckout(tenant, { seats: 9 }),
    ]);
    expect(clicks.map(({ res }) => res.status)).toEqual([201, 201]);
    expect(clicks[1]?.body.id).toBe(clicks[0]?.body.id);
    // Another request is another session.
    const other = await startCheckout(tenant, { seats: 10 });
    expect(other.body.id).not.toBe(clicks[0]?.body.id);
  });

  it("refuses redirect URLs off the allowed origins, not https, or of another scheme", async () => {
    const tenant = await freeTenant();
    const refused: [Record<string, string>, string][] = [
      [{ success_url: "http://app.example.test/done" }, "success_url"],
      [{ success_url: "https://evil.example/done" }, "success_url"],
      [{ success_url: "https://app.example.test.evil.example/done" }, "success_url"],
      [{ cancel_url: "javascript:alert(1)" }, "cancel_url"],
      [{ cancel_url: "data:text/html,<script>alert(1)</script>" }, "cancel_url"],
      [{ cancel_url: "https://user:pass@app.example.test/" }, "cancel_url"],
      [{ cancel_url: `${APP}/back?s={CHECKOUT_SESSION_ID}` }, "cancel_url"],
      [{ success_url: "/relative" }, "success_url"],
      [{ success_url: "https://app.example.test:8443/done" }, "success_url"],
    ];
    for (const [fields, path] of refused) {
      const { res, body } = await startCheckout(tenant, fields);
      expect(res.status, JSON.stringify(fields)).toBe(422);
      expect(body.code).toBe("validation_failed");
      expect(body.errors.map((e: { path: string }) => e.path)).toEqual([path]);
    }
    expect(await billingAccount(tenant.institution.id)).toBeUndefined();
  });

  it("allows any port of an origin configured with :* (development's loopback origins)", async () => {
    const tenant = await freeTenant();
    const dev = {
      BILLING_REDIRECT_ORIGINS: "http://127.0.0.1:*, http://localhost:*",
    } as unknown as Partial<Cloudflare.Env>;
    const ok = await callJson("/api/billing/checkout-session", {
      token: tenant.admin.token,
      env: dev,
      body: checkoutBody({ success_url: "http://127.0.0.1:5173/done", cancel_url: "http://localhost:8787/" }),
    });
    expect(ok.res.status).toBe(201);
    const refused = await callJson("/api/billing/checkout-session", {
      token: tenant.admin.token,
      env: dev,
      body: checkoutBody({ success_url: "http://10.0.0.1:5173/done", cancel_url: "https://127.0.0.1:5173/" }),
    });
    expect(refused.res.status).toBe(422);
    expect(refused.body.errors.map((e: { path: string }) => e.path)).toEqual(["success_url", "cancel_url"]);
  });

  it("refuses fewer seats than invited and active members", async () => {
    const tenant = await freeTenant();
    const { res, body } = await startCheckout(tenant, { seats: 2 });
    expect(res.status).toBe(422);
    expect(body.errors).toEqual([{ path: "seats", message: expect.stringContaining("at least 3") }]);
    await database(env.DB).update(users).set({ status: "suspended" }).where(eq(users.id, tenant.learner.id));
    expect((await startCheckout(tenant, { seats: 2 })).res.status).toBe(201);
  });

  it("answers 422 contact_sales for Enterprise, and for an institution under an Enterprise contract", async () => {
    const tenant = await freeTenant();
    const enterprise = await startCheckout(tenant, { plan: "enterprise" });
    expect(enterprise.res.status).toBe(422);
    expect(enterprise.body.code).toBe("contact_sales");
    const contract = await createTenant({ plan: "enterprise" });
    const pro = await startCheckout(contract);
    expect(pro.res.status).toBe(422);
    expect(pro.body.code).toBe("contact_sales");
    expect((await startCheckout(tenant, { plan: "free" })).body.errors[0].path).toBe("plan");
  });

  it("answers 409 subscription_exists once the institution has a live subscription, and no trial after one", async () => {
    const tenant = await freeTenant();
    const { body } = await startCheckout(tenant);
    await payCheckout(body.url, { card: true });
    const completed = await stripeApi(`/v1/checkout/sessions/${body.id}`);
    const subscription = await stripeApi(`/v1/subscriptions/${completed.subscription}`, {
      method: "GET",
      params: { "expand[]": "items.data.price" },
    });
    await recordSubscription(tenant.institution.id, subscription);

    const again = await startCheckout(tenant);
    expect(again.res.status).toBe(409);
    expect(again.body.code).toBe("subscription_exists");

    // Once it has ended, a new checkout is possible, without a second trial.
    await database(env.DB)
      .update(billingAccounts)
      .set({ subscriptionStatus: "canceled" })
      .where(eq(billingAccounts.institutionId, tenant.institution.id));
    const next = await startCheckout(tenant);
    expect(next.res.status).toBe(201);
    expect((await stripeSession(next.body.id)).payment_method_collection).toBe("always");
  });

  it("applies a given promotion code as the session's discount, and refuses an invalid one", async () => {
    const tenant = await freeTenant();
    const { promotion_code } = await createTestPromotionCode({ percent_off: 15 });
    const { res, body } = await startCheckout(tenant, { promo_code: promotion_code.code });
    expect(res.status).toBe(201);
    const held = await stripeSession(body.id);
    expect(held.discounts).toMatchObject([{ promotion_code: promotion_code.id }]);
    expect(held.allow_promotion_codes).toBeNull();

    const expired = await startCheckout(tenant, { promo_code: "EXPIRED10" });
    expect(expired.res.status).toBe(422);
    expect(expired.body).toMatchObject({ code: "promo_code_invalid", reason: "expired" });
  });

  it("answers 503 billing_not_configured without a Stripe key", async () => {
    const tenant = await freeTenant();
    const { res, body } = await callJson("/api/billing/checkout-session", {
      token: tenant.admin.token,
      env: { STRIPE_SECRET_KEY: "" },
      body: checkoutBody(),
    });
    expect(res.status).toBe(503);
    expect(body.code).toBe("billing_not_configured");
  });

  it("is for institution admins with billing:write", async () => {
    const tenant = await freeTenant();
    for (const token of [tenant.learner.token, tenant.instructor.token]) {
      const { res } = await callJson("/api/billing/checkout-session", { token, body: checkoutBody() });
      expect(res.status).toBe(403);
    }
    const reader = await mintToken(tenant.admin, ["billing:read"]);
    const { res, body } = await callJson("/api/billing/checkout-session", {
      token: reader.token,
      body: checkoutBody(),
    });
    expect(res.status).toBe(403);
    expect(body.detail).toContain("billing:write");
    const staff = await createPlatformAdmin();
    const none = await callJson("/api/billing/checkout-session", {
      token: staff.token,
      body: checkoutBody(),
    });
    expect(none.res.status).toBe(403);
    expect(await billingAccount(tenant.institution.id)).toBeUndefined();
  });
});
