import { describe, expect, it } from "vitest";
import { call, callJson } from "../helpers/api";
import { completeCheckout, createTestPromotionCode, stripeApi, stripeStandInUrl } from "../helpers/stripe";
import { createPlatformAdmin, createTenant, type Tenant } from "../helpers/tenants";
import { Browser, csrfOf, textOf } from "./support";

// The tests' worker allows billing redirects to this origin only (vitest.config.ts): the dashboard is
// reached on it, as a deployment lists its own origin in BILLING_REDIRECT_ORIGINS.
const APP = "https://app.example.test";
const BILLING = `${APP}/dashboard/settings/billing`;
const SAME_ORIGIN = { Origin: APP };

async function adminOf(tenant: Tenant) {
  const browser = new Browser();
  expect((await browser.signIn(tenant.admin.email)).status).toBe(303);
  return browser;
}

async function subscriptionOf(tenant: Tenant) {
  return (await callJson("/api/billing/subscription", { token: tenant.admin.token })).body;
}

describe("dashboard: billing", () => {
  it("shows a Free institution its plan, seats and the upgrade with Pro's prices and trial", async () => {
    const tenant = await createTenant({ plan: "free" });
    const browser = await adminOf(tenant);
    const res = await browser.get(BILLING);
    expect(res.status).toBe(200);
    const text = textOf(await res.text());
    expect(text).toContain("Plan Free");
    expect(text).toContain("No subscription");
    expect(text).toContain("3 members");
    expect(text).toContain("Upgrade to Pro");
    expect(text).toMatch(/€9\.00 per seat a month/);
    expect(text).toContain("14-day free trial");
    // Checkout and the portal redirect to Stripe (here its stand-in): the page's forms may go there.
    expect(res.headers.get("Content-Security-Policy")).toContain(
      `form-action 'self' https://checkout.stripe.com https://billing.stripe.com ${new URL(stripeStandInUrl()).origin}`,
    );
  });

  it("upgrades through checkout at the stand-in, then shows the trial and opens the portal", async () => {
    const tenant = await createTenant({ plan: "free" });
    const browser = await adminOf(tenant);
    const csrf = csrfOf(await (await browser.get(BILLING)).text());
    const res = await browser.post(
      `${BILLING}/checkout`,
      { _csrf: csrf, interval: "month", seats: "5", promo_code: "" },
      SAME_ORIGIN,
    );
    expect(res.status).toBe(303);
    const location = res.headers.get("Location")!;
    expect(location.startsWith(`${stripeStandInUrl()}/checkout/cs_test_`)).toBe(true);
    const session = await stripeApi(`/v1/checkout/sessions/${location.split("/").pop()}`, {
      params: { "expand[]": "line_items" },
      method: "GET",
    });
    expect(session).toMatchObject({
      success_url: `${BILLING}?notice=done`,
      cancel_url: `${BILLING}?notice=cancelled`,
      client_reference_id: tenant.institution.id,
    });
    expect(session.line_items.data).toMatchObject([{ price: { id: "price_pro_month" }, quantity: 5 }]);

    const paid = await completeCheckout(location, { card: false });
    expect(paid.location).toBe(`${BILLING}?notice=done`);
    expect(await subscriptionOf(tenant)).toMatchObject({ status: "trialing", plan: "pro", seats: 5 });
    const after = textOf(await (await browser.get(`${BILLING}?notice=done`)).text());
    expect(after).toContain("Stripe is confirming your subscription");
    expect(after).toContain("On trial");
    expect(after).toContain("5 seats paid for");
    expect(after).toContain("Free trial: 14 days left");
    expect(after).not.toContain("Upgrade to Pro");

    const portal = await browser.post(`${BILLING}/portal`, { _csrf: csrf }, SAME_ORIGIN);
    expect(portal.status).toBe(303);
    expect(portal.headers.get("Location")!.startsWith(stripeStandInUrl())).toBe(true);
  });

  it("shows the service's refusals next to the form and changes nothing; refuses a forged form", async () => {
    const tenant = await createTenant({ plan: "free" });
    const browser = await adminOf(tenant);
    const csrf = csrfOf(await (await browser.get(BILLING)).text());
    const tooFew = await browser.post(
      `${BILLING}/checkout`,
      { _csrf: csrf, interval: "month", seats: "1" },
      SAME_ORIGIN,
    );
    expect(tooFew.status).toBe(422);
    expect(textOf(await tooFew.text())).toContain("Seats: must be at least 3");
    const notANumber = await browser.post(
      `${BILLING}/checkout`,
      { _csrf: csrf, interval: "month", seats: "many" },
      SAME_ORIGIN,
    );
    expect(notANumber.status).toBe(422);
    expect(textOf(await notANumber.text())).toContain("Seats:");
    const unknownCode = await browser.post(
      `${BILLING}/promo`,
      { _csrf: csrf, code: "NO-SUCH-CODE" },
      SAME_ORIGIN,
    );
    expect(unknownCode.status).toBe(422);
    expect(textOf(await unknownCode.text())).toContain("No promotion code NO-SUCH-CODE");
    const forged = await browser.post(
      `${BILLING}/checkout`,
      { _csrf: "forged", interval: "month" },
      SAME_ORIGIN,
    );
    expect(forged.status).toBe(403);
    const crossSite = await browser.post(
      `${BILLING}/promo`,
      { _csrf: csrf, code: "X" },
      { Origin: "https://evil.example" },
    );
    expect(crossSite.status).toBe(403);
    expect(await subscriptionOf(tenant)).toMatchObject({
      status: "none",
      plan: "free",
      pending_promo_code: null,
    });
  });

  it("keeps a promotion code for the next checkout", async () => {
    const tenant = await createTenant({ plan: "free" });
    const { promotion_code: promo } = await createTestPromotionCode({ percent_off: 20 });
    const browser = await adminOf(tenant);
    const csrf = csrfOf(await (await browser.get(BILLING)).text());
    const res = await browser.post(`${BILLING}/promo`, { _csrf: csrf, code: promo.code }, SAME_ORIGIN);
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/dashboard/settings/billing?notice=kept");
    expect((await subscriptionOf(tenant)).pending_promo_code).toBe(promo.code);
    const text = textOf(await (await browser.get(`${BILLING}?notice=kept`)).text());
    expect(text).toContain("The promotion code is kept for your checkout");
    expect(text).toContain(`${promo.code} — applied at your next checkout`);
  });

  it("says clearly when the deployment has no billing, and offers no checkout", async () => {
    const tenant = await createTenant({ plan: "free" });
    const browser = await adminOf(tenant);
    const unconfigured = { STRIPE_SECRET_KEY: "" } as Partial<Cloudflare.Env>;
    const headers = { Cookie: browser.cookieHeader(), "CF-Connecting-IP": browser.ip };
    const page = await call(BILLING, { headers, env: unconfigured });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(textOf(html)).toContain("Billing is not set up on this deployment");
    expect(html).not.toContain("Continue to checkout");
    const res = await call(`${BILLING}/checkout`, {
      method: "POST",
      rawBody: new URLSearchParams({ _csrf: csrfOf(html), interval: "month", seats: "3" }).toString(),
      headers: { ...headers, ...SAME_ORIGIN, "Content-Type": "application/x-www-form-urlencoded" },
      env: unconfigured,
    });
    expect(res.status).toBe(503);
    expect(textOf(await res.text())).toContain("Billing is not set up on this deployment");
  });

  it("tells platform staff that billing is the institution's admins'", async () => {
    const staff = await createPlatformAdmin();
    const browser = new Browser();
    await browser.signIn(staff.email);
    const res = await browser.get(BILLING);
    expect(res.status).toBe(200);
    expect(textOf(await res.text())).toContain("Billing is managed by each institution's administrators");
    expect((await call("/api/billing/subscription", { token: staff.token })).status).toBe(403);
  });
});
