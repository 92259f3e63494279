import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { billingAccounts } from "../../src/db/schema";
import type { applyPromoRoute } from "../../src/domains/billing/routes/apply-promo";
import { database } from "../../src/platform/db";
import { callJson, type ResponseBody } from "../helpers/api";
import {
  createTestPromotionCode,
  deliverAll,
  payCheckout,
  STRIPE_PRODUCT_PRO,
  stripeApi,
} from "../helpers/stripe";
import type { Tenant } from "../helpers/tenants";
import { billingAccount, freeTenant, recordSubscription, startCheckout, stripeSession } from "./support";

type Applied = ResponseBody<typeof applyPromoRoute, 200>;

function applyPromo(tenant: Tenant, code: string) {
  return callJson<Applied & Record<string, any>>("/api/billing/apply-promo", {
    token: tenant.admin.token,
    body: { code },
  });
}

/** The tenant with a paid subscription (card on file), recorded as the webhook would. */
async function subscribed(tenant: Tenant): Promise<string> {
  const { body } = await startCheckout(tenant);
  await payCheckout(body.url, { card: true });
  const completed = await stripeApi(`/v1/checkout/sessions/${body.id}`);
  const subscription = await stripeApi(`/v1/subscriptions/${completed.subscription}`);
  await recordSubscription(tenant.institution.id, subscription, { paymentMethodOnFile: true });
  return subscription.id;
}

describe("POST /api/billing/apply-promo", () => {
  it("keeps a valid code for the next checkout, which applies it", async () => {
    const tenant = await freeTenant();
    const { res, body } = await applyPromo(tenant, "welcome20");
    expect(res.status).toBe(200);
    expect(body).toEqual({
      code: "WELCOME20",
      applied_to: "next_checkout",
      discount: {
        code: "WELCOME20",
        percent_off: 20,
        amount_off: null,
        currency: null,
        duration: "repeating",
        duration_in_months: 3,
        ends_at: null,
      },
    });
    // Applying it again is no error.
    expect((await applyPromo(tenant, "WELCOME20")).res.status).toBe(200);
    const account = await billingAccount(tenant.institution.id);
    expect(account).toMatchObject({
      pendingPromoCode: "WELCOME20",
      pendingPromotionCodeId: expect.stringMatching(/^promo_/),
    });

    const subscription = await callJson("/api/billing/subscription", { token: tenant.admin.token });
    expect(subscription.body).toMatchObject({ status: "none", pending_promo_code: "WELCOME20" });

    const checkout = await startCheckout(tenant);
    expect(checkout.res.status).toBe(201);
    const held = await stripeSession(checkout.body.id);
    expect(held.discounts).toMatchObject([{ promotion_code: account?.pendingPromotionCodeId }]);
    expect(held.allow_promotion_codes).toBeNull();

    // Paid, and Stripe's events delivered: the kept code is used up, the subscription carries it.
    expect((await payCheckout(checkout.body.url)).status).toBe(303);
    const delivered = await deliverAll(account!.stripeCustomerId);
    expect(delivered.responses.every((r) => r.status === 200)).toBe(true);
    expect(await billingAccount(tenant.institution.id)).toMatchObject({
      pendingPromoCode: null,
      pendingPromotionCodeId: null,
      subscriptionStatus: "trialing",
    });
    const after = await callJson("/api/billing/subscription", { token: tenant.admin.token });
    expect(after.body).toMatchObject({
      plan: "pro",
      pending_promo_code: null,
      discount: { code: "WELCOME20" },
    });
  });

  it("shows an amount off with its currency", async () => {
    const tenant = await freeTenant();
    const { promotion_code } = await createTestPromotionCode({
      amount_off: 500,
      currency: "eur",
      duration: "once",
    });
    const { body } = await applyPromo(tenant, promotion_code.code);
    expect(body.discount).toMatchObject({
      percent_off: null,
      amount_off: 500,
      currency: "eur",
      duration: "once",
      duration_in_months: null,
    });
  });

  it("refuses each kind of unusable code with its reason, and keeps nothing", async () => {
    const tenant = await freeTenant();
    const past = Math.floor(Date.now() / 1000) - 3600;
    const other = await stripeApi("/v1/products", { params: { name: "Something else" } });
    const cases: [string, string][] = [
      [`NOPE${crypto.randomUUID().slice(0, 8)}`, "not_found"],
      ["EXPIRED10", "expired"],
      [(await createTestPromotionCode({ expires_at: past })).promotion_code.code, "expired"],
      [(await createTestPromotionCode({ redeem_by: past })).promotion_code.code, "expired"],
      [(await createTestPromotionCode({ active: false })).promotion_code.code, "inactive"],
      [
        (await createTestPromotionCode({ max_redemptions: 2, times_redeemed: 2 })).promotion_code.code,
        "exhausted",
      ],
      [
        (await createTestPromotionCode({ applies_to_products: [other.id] })).promotion_code.code,
        "not_applicable",
      ],
      [
        (await createTestPromotionCode({ amount_off: 500, currency: "usd" })).promotion_code.code,
        "not_applicable",
      ],
      [
        (
          await createTestPromotionCode({
            customer: (await stripeApi("/v1/customers", { params: { name: "x" } })).id,
          })
        ).promotion_code.code,
        "not_applicable",
      ],
    ];
    for (const [code, reason] of cases) {
      const { res, body } = await applyPromo(tenant, code);
      expect(res.status, code).toBe(422);
      expect(res.headers.get("Content-Type")).toBe("application/problem+json");
      expect(body, code).toMatchObject({ code: "promo_code_invalid", reason });
    }
    expect((await billingAccount(tenant.institution.id))?.pendingPromoCode ?? null).toBeNull();
    // A code for the product Lingua Pro sells applies.
    const pro = await createTestPromotionCode({ applies_to_products: [STRIPE_PRODUCT_PRO] });
    expect((await applyPromo(tenant, pro.promotion_code.code)).res.status).toBe(200);
  });

  it("refuses first-time codes to an institution that subscribed before", async () => {
    const tenant = await freeTenant();
    const { promotion_code } = await createTestPromotionCode({ first_time_transaction: true });
    expect((await applyPromo(tenant, promotion_code.code)).res.status).toBe(200);
    await database(env.DB)
      .update(billingAccounts)
      .set({ everSubscribed: true, subscriptionId: "sub_old", subscriptionStatus: "canceled" })
      .where(eq(billingAccounts.institutionId, tenant.institution.id));
    const { res, body } = await applyPromo(tenant, promotion_code.code);
    expect(res.status).toBe(422);
    expect(body.reason).toBe("not_applicable");
  });

  it("drops a kept code that stopped being valid when the checkout uses it", async () => {
    const tenant = await freeTenant();
    const { promotion_code } = await createTestPromotionCode({ percent_off: 5 });
    await applyPromo(tenant, promotion_code.code);
    await stripeApi(`/v1/promotion_codes/${promotion_code.id}`, { params: { active: "false" } });
    const refused = await startCheckout(tenant);
    expect(refused.res.status).toBe(422);
    expect(refused.body).toMatchObject({ code: "promo_code_invalid", reason: "inactive" });
    expect((await billingAccount(tenant.institution.id))?.pendingPromoCode).toBeNull();
    const next = await startCheckout(tenant);
    expect(next.res.status).toBe(201);
    expect((await stripeSession(next.body.id)).allow_promotion_codes).toBe(true);
  });

  it("applies a code to the running subscription in Stripe, once however often it is asked", async () => {
    const tenant = await freeTenant();
    const subscriptionId = await subscribed(tenant);
    const { promotion_code } = await createTestPromotionCode({ percent_off: 30, max_redemptions: 1 });
    const first = await applyPromo(tenant, promotion_code.code);
    expect(first.res.status).toBe(200);
    expect(first.body).toMatchObject({ applied_to: "subscription", discount: { percent_off: 30 } });
    const subscription = await stripeApi(`/v1/subscriptions/${subscriptionId}`, {
      method: "GET",
      params: { "expand[]": "discounts" },
    });
    expect(subscription.discounts).toMatchObject([{ promotion_code: promotion_code.id }]);
    // Its one redemption is used, by this subscription: asking again answers the same.
    const again = await applyPromo(tenant, promotion_code.code);
    expect(again.res.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect((await billingAccount(tenant.institution.id))?.pendingPromoCode ?? null).toBeNull();
  });

  it("checks a minimum amount against the subscription's price times its seats", async () => {
    const tenant = await freeTenant();
    await subscribed(tenant);
    // Three seats at 900: 2,700 minor units a month.
    const high = await createTestPromotionCode({ minimum_amount: 2_701, minimum_amount_currency: "eur" });
    const { res, body } = await applyPromo(tenant, high.promotion_code.code);
    expect(res.status).toBe(422);
    expect(body.reason).toBe("not_applicable");
    const low = await createTestPromotionCode({ minimum_amount: 2_700, minimum_amount_currency: "eur" });
    expect((await applyPromo(tenant, low.promotion_code.code)).res.status).toBe(200);
  });

  it("is for institution admins with billing:write, and validates the body", async () => {
    const tenant = await freeTenant();
    for (const token of [tenant.learner.token, tenant.instructor.token]) {
      const { res } = await callJson("/api/billing/apply-promo", { token, body: { code: "WELCOME20" } });
      expect(res.status).toBe(403);
    }
    const { res, body } = await callJson("/api/billing/apply-promo", {
      token: tenant.admin.token,
      body: { code: "", extra: true },
    });
    expect(res.status).toBe(422);
    expect(body.code).toBe("validation_failed");
  });
});
