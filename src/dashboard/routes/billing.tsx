import type { Context, Hono } from "hono";
import type { Child } from "hono/jsx";
import { createCheckoutSession } from "../../domains/billing/checkout";
import { listPlans } from "../../domains/billing/plans";
import { createPortalSession } from "../../domains/billing/portal";
import { applyPromo } from "../../domains/billing/promo";
import { ApplyPromoBody, CreateCheckoutSessionBody } from "../../domains/billing/schemas";
import { readSubscription } from "../../domains/billing/subscription-read";
import { trialStatus } from "../../domains/billing/trial";
import { getInstitution } from "../../domains/institutions/service";
import type { AppEnv } from "../../env";
import { enforce, holdsAbility } from "../../platform/auth/policy";
import { ApiError } from "../../platform/errors";
import { field, fieldMessages, formOf, issuesOf } from "../forms";
import { contentSecurityPolicy, html } from "../http";
import { ErrorSummary, Layout } from "../layout";
import {
  CHECKOUT_PATH,
  EnterpriseCard,
  LABELS,
  NotConfiguredCard,
  PlanCard,
  PORTAL_PATH,
  PortalCard,
  PROMO_PATH,
  PromoCard,
  TrialCard,
  UpgradeCard,
  type UpgradeForm,
} from "../pages/billing";
import { BILLING_PATH, INSTITUTIONS_PATH } from "../prefixes";
import { checkCsrf, type DashboardSession, signedIn } from "../session";

const SECTION = "billing";
const NOTICES: Record<string, string> = {
  done: "Thank you. Stripe is confirming your subscription: this page shows it as soon as Stripe tells Lingua, usually within seconds. Reload to see it.",
  cancelled: "Checkout was cancelled; nothing was charged. You can start it again whenever you like.",
  promo: "The promotion code was applied.",
  kept: "The promotion code is kept for your checkout: it is applied when you upgrade.",
};

/** Where checkout and the portal send the browser: Stripe's own pages (and, locally, the stand-in's). */
function stripeOrigins(c: Context<AppEnv>): string[] {
  const origins = ["https://checkout.stripe.com", "https://billing.stripe.com"];
  const base = c.var.dashboard.ctx.config.billing.apiBase;
  if (base) origins.push(base.origin);
  return origins;
}

/**
 * The billing page's CSP: its checkout and portal forms answer with a redirect to Stripe, which a
 * browser follows only when `form-action` allows Stripe's origin (Chromium checks redirects too).
 */
function billingCsp(c: Context<AppEnv>): string {
  return contentSecurityPolicy(c.var.nonce).replace(
    "form-action 'self'",
    `form-action 'self' ${stripeOrigins(c).join(" ")}`,
  );
}

async function renderBilling(
  c: Context<AppEnv>,
  options: { errors?: string[]; form?: Partial<UpgradeForm>; status?: number; promo?: string } = {},
) {
  const session = c.var.dashboard;
  enforce(holdsAbility(session.principal, "billing:read"));
  c.header("Content-Security-Policy", billingCsp(c));
  const page = (children: Child, status = 200) =>
    html(
      c,
      <Layout title="Billing" nonce={c.var.nonce} session={session} current={SECTION}>
        <p class="crumbs">Settings</p>
        <h1>Billing</h1>
        {children}
      </Layout>,
      status,
    );
  if (!session.principal.institution) {
    // Billing is an institution's own (the API refuses staff tokens too): its admins manage it.
    return page(
      <div class="card empty">
        <p>
          Billing is managed by each institution's administrators, signed in with their own accounts. Platform
          staff see an institution's plan under <a href={INSTITUTIONS_PATH}>Institutions</a>.
        </p>
      </div>,
    );
  }
  const ctx = session.ctx;
  const [subscription, trial, plans, { institution, memberCount }] = await Promise.all([
    readSubscription(ctx),
    trialStatus(ctx),
    listPlans(ctx),
    getInstitution(ctx, session.principal.institution.id),
  ]);
  const configured = Boolean(ctx.config.billing.secretKey);
  const mayWrite = holdsAbility(session.principal, "billing:write").allowed;
  const pro = plans.find((p) => p.id === "pro");
  const current = plans.find((p) => p.current);
  const live = ["trialing", "active", "past_due", "unpaid"].includes(subscription.status);
  const notice = NOTICES[c.req.query("notice") ?? ""];
  const form: UpgradeForm = {
    interval: options.form?.interval ?? "month",
    seats: options.form?.seats ?? String(Math.max(1, memberCount)),
    promoCode: options.form?.promoCode ?? "",
  };
  const errors = options.errors ?? [];
  return page(
    <>
      {notice ? (
        <p class="notice" role="status">
          {notice}
        </p>
      ) : null}
      <ErrorSummary errors={errors} />
      {configured ? null : <NotConfiguredCard />}
      <PlanCard
        subscription={subscription}
        current={current}
        memberCount={memberCount}
        seats={institution.seats}
        locale={institution.locale}
        live={live}
      />
      {trial.on_trial ? <TrialCard trial={trial} /> : null}
      {institution.plan === "enterprise" ? (
        <EnterpriseCard />
      ) : !live && configured && mayWrite && pro ? (
        <UpgradeCard
          pro={pro}
          subscription={subscription}
          form={form}
          memberCount={memberCount}
          locale={institution.locale}
          csrf={session.csrf}
        />
      ) : null}
      {configured && mayWrite && subscription.status !== "none" ? <PortalCard csrf={session.csrf} /> : null}
      {configured && mayWrite && institution.plan !== "enterprise" ? (
        <PromoCard csrf={session.csrf} live={live} message={options.promo} />
      ) : null}
    </>,
    options.status ?? 200,
  );
}

/** A service's refusal as the page's error list (and its status); anything else is thrown on. */
function refusal(error: unknown): { errors: string[]; status: number } {
  const expected = ["billing_not_configured", "billing_provider_error"];
  if (!(error instanceof ApiError) || (error.status >= 500 && !expected.includes(error.code))) throw error;
  if (error.code === "billing_not_configured")
    return { errors: [`Billing is not set up on this deployment: ${error.message}`], status: error.status };
  if (error.code === "billing_provider_error")
    return {
      errors: [
        `Stripe could not be reached; nothing was changed or charged. Try again in a moment. (${error.message})`,
      ],
      status: error.status,
    };
  return {
    errors: error.errors ? fieldMessages(error.errors, LABELS) : [error.message],
    status: error.status,
  };
}

function origin(c: Context<AppEnv>): string {
  return new URL(c.req.url).origin;
}

function requireWrite(session: DashboardSession) {
  enforce(holdsAbility(session.principal, "billing:write"));
}

/**
 * Billing: the billing domain's services behind the abilities of `/api/billing` — the plan, trial
 * and seats; checkout and the portal as redirects to Stripe (its stand-in locally); promotion codes.
 */
export function registerBilling(app: Hono<AppEnv>) {
  app.get(BILLING_PATH, signedIn, (c) => renderBilling(c));

  app.post(CHECKOUT_PATH, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    requireWrite(session);
    const posted = await formOf(c);
    const form: UpgradeForm = {
      interval: field(posted, "interval"),
      seats: field(posted, "seats").trim(),
      promoCode: field(posted, "promo_code").trim(),
    };
    const seats = Number(form.seats);
    const parsed = CreateCheckoutSessionBody.safeParse({
      plan: "pro",
      interval: form.interval || "month",
      seats: form.seats === "" ? undefined : Number.isFinite(seats) ? seats : form.seats,
      success_url: `${origin(c)}${BILLING_PATH}?notice=done`,
      cancel_url: `${origin(c)}${BILLING_PATH}?notice=cancelled`,
      ...(form.promoCode ? { promo_code: form.promoCode } : {}),
    });
    if (!parsed.success)
      return renderBilling(c, {
        errors: fieldMessages(issuesOf(parsed.error.issues), LABELS),
        form,
        status: 422,
      });
    try {
      const checkout = await createCheckoutSession(session.ctx, parsed.data, undefined);
      return c.redirect(checkout.url, 303);
    } catch (error) {
      return renderBilling(c, { ...refusal(error), form });
    }
  });

  app.post(PORTAL_PATH, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    requireWrite(session);
    try {
      const portal = await createPortalSession(session.ctx, { return_url: `${origin(c)}${BILLING_PATH}` });
      c.header("Cache-Control", "no-store");
      return c.redirect(portal.url, 303);
    } catch (error) {
      return renderBilling(c, refusal(error));
    }
  });

  app.post(PROMO_PATH, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    requireWrite(session);
    const parsed = ApplyPromoBody.safeParse({ code: field(await formOf(c), "code") });
    if (!parsed.success)
      return renderBilling(c, { errors: fieldMessages(issuesOf(parsed.error.issues), LABELS), status: 422 });
    try {
      const applied = await applyPromo(session.ctx, parsed.data);
      return c.redirect(
        `${BILLING_PATH}?notice=${applied.applied_to === "subscription" ? "promo" : "kept"}`,
        303,
      );
    } catch (error) {
      return renderBilling(c, refusal(error));
    }
  });
}
