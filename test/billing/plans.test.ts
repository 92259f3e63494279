import { describe, expect, it } from "vitest";
import { PLAN_IDS, planCatalogue, planForPrice, priceFor } from "../../src/domains/billing/plans";
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

describe("the plan catalogue", () => {
  const billing = { prices: { pro: { month: "price_m", year: "price_y" } } };

  it("maps a configured price to its plan and interval, and nothing else to a plan", () => {
    expect(planForPrice(billing, "price_m")).toEqual({ plan: "pro", interval: "month" });
    expect(planForPrice({ config: { billing } }, "price_y")).toEqual({ plan: "pro", interval: "year" });
    expect(planForPrice(billing, "price_other")).toBeNull();
    expect(planForPrice(billing, null)).toBeNull();
    expect(planForPrice({ prices: { pro: { month: null, year: null } } }, "")).toBeNull();
    expect(priceFor(billing, "enterprise", "month")).toBeNull();
  });

  it("reads every plan's rate limit from the token gate's numbers", () => {
    const plans = planCatalogue(14);
    expect(plans.map((plan) => plan.id)).toEqual([...PLAN_IDS]);
    for (const plan of plans) expect(plan.rate_limit_per_minute).toBe(PLAN_RATE_LIMITS[plan.id]);
    expect(plans.find((plan) => plan.id === "pro")?.trial_days).toBe(14);
  });
});

describe("GET /api/subscription-plans when Stripe does not answer", () => {
  it("answers 502 billing_provider_error when no price was read before", async () => {
    const tenant = await freeTenant();
    const { res, body } = await callJson("/api/subscription-plans", {
      token: tenant.admin.token,
      // A loopback port nothing listens on: connection refused, after the SDK's retries.
      env: { STRIPE_API_BASE: "http://127.0.0.1:9" } as unknown as Partial<Cloudflare.Env>,
    });
    expect(res.status).toBe(502);
    expect(body.code).toBe("billing_provider_error");
  });
});
