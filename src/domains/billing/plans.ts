import { PLANS, type Plan } from "../../db/schema";
import type { BillingInterval } from "../../db/schema/billing";
import { enforce } from "../../platform/auth/policy";
import { PLAN_RATE_LIMITS } from "../../platform/auth/principal";
import type { Config } from "../../platform/config";
import type { PrincipalContext, ServiceContext } from "../../platform/service/context";
import { callStripe, institutionForBilling } from "./account";
import { billingScope, mayUseBilling } from "./policy";
import { stripeFor } from "./stripe-client";

/**
 * The subscription plans: what each one is (static, here) and which Stripe prices buy it (the
 * deployment's settings). The numbers a plan enforces live where they are enforced — the per-token
 * limit in platform/auth/principal.ts — and are only read from there.
 */
export const PLAN_IDS = PLANS;
export type PlanId = Plan;

export interface PlanDescription {
  id: PlanId;
  name: string;
  description: string;
  /** Requests per rolling minute per token (Enterprise: the default of a contract that names none). */
  rate_limit_per_minute: number;
  /**
   * Seats the plan gives without buying any; null: the plan sets no cap (Free keeps the institution's
   * own seat setting, unlimited unless an administrator set one; Enterprise is by contract). Pro is
   * bought per seat: the checkout's `seats` is the number of seats, at least this one.
   */
  seats_included: number | null;
  features: string[];
  /** Days of free trial a first subscription of this plan starts with; 0: none. */
  trial_days: number;
  /** Bought through sales, not checkout: no prices. */
  contact_sales: boolean;
}

/** What each plan adds to the one below it. */
const FREE_FEATURES = ["courses_and_lessons", "progress_tracking", "public_catalog", "api_access"];
const PRO_FEATURES = [
  ...FREE_FEATURES,
  "webhooks",
  "lti",
  "xapi_forwarding",
  "sso",
  "exports",
  "bulk_provisioning",
];
const ENTERPRISE_FEATURES = [...PRO_FEATURES, "custom_rate_limit", "priority_support"];

/** The catalogue, in the order it is listed (cheapest first). Trial length comes from the settings. */
export function planCatalogue(trialDays: number): PlanDescription[] {
  return [
    {
      id: "free",
      name: "Free",
      description: "Courses, progress and the public catalogue for a small team, at no cost.",
      rate_limit_per_minute: PLAN_RATE_LIMITS.free,
      seats_included: null,
      features: FREE_FEATURES,
      trial_days: 0,
      contact_sales: false,
    },
    {
      id: "pro",
      name: "Pro",
      description:
        "Everything in Free with higher limits and the integrations: webhooks, LTI, xAPI, SSO and exports. Billed per seat.",
      rate_limit_per_minute: PLAN_RATE_LIMITS.pro,
      seats_included: 1,
      features: PRO_FEATURES,
      trial_days: trialDays,
      contact_sales: false,
    },
    {
      id: "enterprise",
      name: "Enterprise",
      description:
        "Pro with a contracted rate limit, budget and seat count, and support terms. Contact sales.",
      rate_limit_per_minute: PLAN_RATE_LIMITS.enterprise,
      seats_included: null,
      features: ENTERPRISE_FEATURES,
      trial_days: 0,
      contact_sales: true,
    },
  ];
}

type BillingConfig = Pick<Config["billing"], "prices">;
/** A deployment's billing settings, or anything that carries them (a service context, the config). */
type PriceSource = BillingConfig | { billing: BillingConfig } | { config: { billing: BillingConfig } };

function billingOf(source: PriceSource): BillingConfig {
  if ("prices" in source) return source;
  if ("billing" in source) return source.billing;
  return source.config.billing;
}

/** The configured Stripe price ids of the plans sold through checkout, per interval. */
export function configuredPrices(
  source: PriceSource,
): { plan: "pro"; interval: BillingInterval; priceId: string }[] {
  const { prices } = billingOf(source);
  const out: { plan: "pro"; interval: BillingInterval; priceId: string }[] = [];
  for (const interval of ["month", "year"] as const) {
    const priceId = prices.pro[interval];
    if (priceId) out.push({ plan: "pro", interval, priceId });
  }
  return out;
}

/** The configured Stripe price of a plan and interval, or null (not sold through checkout, or not configured). */
export function priceFor(source: PriceSource, plan: PlanId, interval: BillingInterval): string | null {
  if (plan !== "pro") return null;
  return billingOf(source).prices.pro[interval];
}

/** The plan and interval a Stripe price id buys, or null when the deployment sells nothing at that price. */
export function planForPrice(
  source: PriceSource,
  priceId: string | null | undefined,
): { plan: "pro"; interval: BillingInterval } | null {
  if (!priceId) return null;
  const match = configuredPrices(source).find((price) => price.priceId === priceId);
  return match ? { plan: match.plan, interval: match.interval } : null;
}

/** A price of a plan as the API shows it, read from Stripe. */
export interface PlanPrice {
  id: string;
  interval: BillingInterval;
  /** ISO 4217, lower case as Stripe gives it. */
  currency: string;
  /** Minor units of `currency`, per seat when `per_seat`. */
  unit_amount: number;
  /** True when the amount is per seat (the subscription's quantity is the seats). */
  per_seat: boolean;
  /** The Stripe product the price sells (a promotion code may apply to some products only). */
  product: string;
}

/** How long a price read from Stripe is kept in this isolate: prices change rarely, and listing the plans must be fast. */
export const PRICE_CACHE_MS = 5 * 60_000;
/** While Stripe fails, the last price read is answered, and Stripe asked again after this long. */
const STALE_RETRY_MS = 30_000;
/**
 * Prices read, not promises of them: a promise begun by one request must not be awaited by another
 * (workerd ties I/O to the request that started it). Two requests that miss at once both ask Stripe.
 */
const priceCache = new Map<string, { price: PlanPrice | null; until: number }>();

/**
 * A configured price, read from Stripe through this isolate's cache (five minutes); null when Stripe
 * has it in a shape checkout does not sell (tiered, or not recurring by month or year). When Stripe
 * fails, the last price read is answered while there is one; otherwise 502 `billing_provider_error`.
 */
export async function readPrice(ctx: ServiceContext, priceId: string): Promise<PlanPrice | null> {
  const key = `${ctx.config.billing.apiBase?.origin ?? "stripe"} ${priceId}`;
  const now = ctx.now();
  const cached = priceCache.get(key);
  if (cached && cached.until > now) return cached.price;
  try {
    const price = await fetchPrice(ctx, priceId);
    priceCache.set(key, { price, until: now + PRICE_CACHE_MS });
    return price;
  } catch (error) {
    if (!cached) throw error;
    priceCache.set(key, { price: cached.price, until: now + STALE_RETRY_MS });
    return cached.price;
  }
}

async function fetchPrice(ctx: ServiceContext, priceId: string): Promise<PlanPrice | null> {
  const stripe = await stripeFor(ctx);
  const price = await callStripe("read the plan's price", () => stripe.prices.retrieve(priceId));
  const interval: string | undefined = price.recurring?.interval;
  if (price.unit_amount === null || (interval !== "month" && interval !== "year")) {
    console.warn(
      JSON.stringify({
        level: "warn",
        message: "a configured Stripe price is not a monthly or yearly per-unit price; not listed",
        price_id: priceId,
      }),
    );
    return null;
  }
  return {
    id: price.id,
    interval,
    currency: price.currency,
    unit_amount: price.unit_amount,
    per_seat: !price.transform_quantity,
    product: typeof price.product === "string" ? price.product : price.product.id,
  };
}

/** The prices of every plan sold through checkout; none when billing is not configured. */
export async function planPrices(ctx: ServiceContext): Promise<Record<PlanId, PlanPrice[]>> {
  const out: Record<PlanId, PlanPrice[]> = { free: [], pro: [], enterprise: [] };
  if (!ctx.config.billing.secretKey) return out;
  const prices = await Promise.all(
    configuredPrices(ctx.config.billing).map(async ({ plan, priceId }) => ({
      plan,
      price: await readPrice(ctx, priceId),
    })),
  );
  for (const { plan, price } of prices) if (price) out[plan].push(price);
  return out;
}

/** The plans with their prices, `current` marking the caller's institution's. */
export async function listPlans(ctx: PrincipalContext) {
  enforce(mayUseBilling(ctx.principal));
  const { institutionId } = billingScope(ctx.principal);
  const [institution, prices] = await Promise.all([
    institutionForBilling(ctx, institutionId),
    planPrices(ctx),
  ]);
  return planCatalogue(ctx.config.billing.trialDays).map((plan) => ({
    ...plan,
    prices: prices[plan.id].map(({ product: _product, ...price }) => price),
    current: plan.id === institution.plan,
  }));
}
