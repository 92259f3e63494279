import { describe, expect, it } from "vitest";
import type { listPlansRoute } from "../../src/domains/billing/routes/list-plans";
import { PLAN_RATE_LIMITS } from "../../src/platform/auth/principal";
import { callJson, type ResponseBody } from "../helpers/api";
import { STRIPE_PRICE_PRO_MONTH, STRIPE_PRICE_PRO_YEAR } from "../helpers/stripe";
import { createTenant } from "../helpers/tenants";
import { freeTenant } from "./support";

type PlanPage = ResponseBody<typeof listPlansRoute, 200>;

describe("GET /api/subscription-plans", () => {
  it("lists Free, Pro and Enterprise with Stripe's prices in minor units, the caller's plan current", async () => {
    const tenant = await freeTenant();
    const { res, body } = await callJson<PlanPage>("/api/subscription-plans", { token: tenant.admin.token });
    expect(res.status).toBe(200);
    expect(body.meta).toMatchObject({ total: 3, current_page: 1 });
    expect(body.data.map((plan) => plan.id)).toEqual(["free", "pro", "enterprise"]);
    const [free, pro, enterprise] = body.data;
    expect(free).toMatchObject({ current: true, prices: [], contact_sales: false, seats_included: null });
    expect(free?.rate_limit_per_minute).toBe(PLAN_RATE_LIMITS.free);
    expect(pro).toMatchObject({
      current: false,
      trial_days: 14,
      contact_sales: false,
      rate_limit_per_minute: PLAN_RATE_LIMITS.pro,
      prices: [
        { id: STRIPE_PRICE_PRO_MONTH, interval: "month", currency: "eur", unit_amount: 900, per_seat: true },
        { id: STRIPE_PRICE_PRO_YEAR, interval: "year", currency: "eur", unit_amount: 9000, per_seat: true },
      ],
    });
    expect(enterprise).toMatchObject({ contact_sales: true, prices: [], current: false });
  });

  it("marks a Pro institution's plan current", async () => {
    const tenant = await createTenant({ plan: "pro" });
    const { body } = await callJson<PlanPage>("/api/subscription-plans", { token: tenant.admin.token });
    expect(body.data.filter((plan) => plan.current).map((plan) => plan.id)).toEqual(["pro"]);
  });

  it("lists the plans without prices, not a 503, on a deployment without billing configured", async () => {
    const tenant = await freeTenant();
    const { res, body } = await callJson<PlanPage>("/api/subscription-plans", {
      token: tenant.admin.token,
      env: { STRIPE_SECRET_KEY: "" },
    });
    expect(res.status).toBe(200);
    expect(body.data.map((plan) => plan.prices)).toEqual([[], [], []]);
  });

  it("pages like every list", async () => {
    const tenant = await freeTenant();
    const { body } = await callJson<PlanPage>("/api/subscription-plans?per_page=2&page=2", {
      token: tenant.admin.token,
    });
    expect(body.data.map((plan) => plan.id)).toEqual(["enterprise"]);
    expect(body.meta).toMatchObject({ total: 3, last_page: 2 });
  });
});
