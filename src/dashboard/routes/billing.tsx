import type { Context, Hono } from "hono";
import type { Child } from "hono/jsx";
import { createCheckoutSession } from "../../domains/billing/checkout";
import { listPlans } from "../../domains/billing/plans";
import { createPortalSession } from "../../domains/billing/portal";
import { applyPromo } from "../../domains/billing/promo";
import { ApplyPromoBody, CreateCheckoutSessionBody, MAX_SEATS } from "../../domains/billing/schemas";
import { readSubscription } from "../../domains/billing/subscription-read";
import { trialStatus } from "../../domains/billing/trial";
import { getInstitution } from "../../domains/institutions/service";
import type { AppEnv } from "../../env";
import { enforce, holdsAbility } from "../../platform/auth/policy";
import { ApiError } from "../../platform/errors";
import { field, fieldMessages, formOf, issuesOf } from "../forms";
import { contentSecurityPolicy, html } from "../http";
import { CsrfField, ErrorSummary, Layout, When } from "../layout";
import { BILLING_PATH, INSTITUTIONS_PATH } from "../prefixes";
import { checkCsrf, type DashboardSession, signedIn } from "../session";

const SECTION = "billing";
const CHECKOUT_PATH = `${BILLING_PATH}/checkout`;
const PORTAL_PATH = `${BILLING_PATH}/portal`;
const PROMO_PATH = `${BILLING_PATH}/promo`;
const LABELS = {
  interval: "Billing period",
  seats: "Seats",
  promo_code: "Promotion code",
  code: "Promotion code",
  // The return addresses are this dashboard's own: refused only when the deployment does not list its
  // origin in BILLING_REDIRECT_ORIGINS, which the operator fixes.
  success_url: "This dashboard's address (the deployment's BILLING_REDIRECT_ORIGINS)",
  cancel_url: "This dashboard's address (the deployment's BILLING_REDIRECT_ORIGINS)",
  return_url: "This dashboard's address (the deployment's BILLING_REDIRECT_ORIGINS)",
};
const NOTICES: Record<string, string> = {
  done: "Thank you. Stripe is confirming your subscription: this page shows it as soon as Stripe tells Lingua, usually within seconds. Reload to see it.",
  cancelled: "Checkout was cancelled; nothing was charged. You can start it again whenever you like.",
  promo: "The promotion code was applied.",
  kept: "The promotion code is kept for your checkout: it is applied when you upgrade.",
};
const STATUS_TEXT: Record<string, string> = {
  none: "No subscription",
  trialing: "On trial",
  active: "Active",
  past_due: "Payment past due",
  unpaid: "Unpaid",
  canceled: "Cancelled",
  incomplete: "Incomplete",
  incomplete_expired: "Expired before payment",
  paused: "Paused",
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

function money(amount: number, currency: string, locale = "en"): string {
  try {
    return new Intl.NumberFormat(locale, { style: "currency", currency: currency.toUpperCase() }).format(
      amount / 100,
    );
  } catch {
    return `${(amount / 100).toFixed(2)} ${currency.toUpperCase()}`;
  }
}

interface UpgradeForm {
  interval: string;
  seats: string;
  promoCode: string;
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
      {configured ? null : (
        <div class="card" role="status">
          <h2>Billing is not set up on this deployment</h2>
          <p>
            Plans can't be bought here yet: the deployment has no Stripe key and prices (
            <code>billing_not_configured</code>). Your plan stays as it is; ask whoever runs this Lingua
            deployment to configure Stripe.
          </p>
        </div>
      )}
      <section class="card" aria-labelledby="plan-heading">
        <h2 id="plan-heading">Your plan</h2>
        <dl class="facts">
          <dt>Plan</dt>
          <dd>
            <strong>{current?.name ?? subscription.plan}</strong>
            {current ? ` — ${current.description}` : null}
          </dd>
          <dt>Subscription</dt>
          <dd>
            <span
              class={
                live && subscription.status !== "past_due" && subscription.status !== "unpaid"
                  ? "badge"
                  : "badge warn"
              }
            >
              {STATUS_TEXT[subscription.status] ?? subscription.status}
            </span>
            {subscription.interval ? ` · billed each ${subscription.interval}` : null}
            {subscription.cancel_at_period_end ? " · ends at the end of this period" : null}
          </dd>
          <dt>Seats</dt>
          <dd>
            {`${memberCount} members`}
            {subscription.seats !== null ? ` · ${subscription.seats} seats paid for` : null}
            {institution.seats !== null
              ? ` · at most ${institution.seats} invited or active at once`
              : " · no seat limit"}
          </dd>
          {subscription.current_period_end ? (
            <>
              <dt>{subscription.cancel_at_period_end ? "Ends" : "Next invoice"}</dt>
              <dd>
                <When iso={subscription.current_period_end} />
                {subscription.latest_invoice_status
                  ? ` · latest invoice ${subscription.latest_invoice_status}`
                  : null}
              </dd>
            </>
          ) : null}
          {subscription.discount ? (
            <>
              <dt>Discount</dt>
              <dd>
                {subscription.discount.code ? <code>{subscription.discount.code}</code> : null}{" "}
                {subscription.discount.percent_off !== null
                  ? `${subscription.discount.percent_off} % off`
                  : `${money(subscription.discount.amount_off ?? 0, subscription.discount.currency ?? "eur", institution.locale)} off`}
                {` (${subscription.discount.duration})`}
              </dd>
            </>
          ) : null}
          {subscription.pending_promo_code ? (
            <>
              <dt>Promotion code</dt>
              <dd>
                <code>{subscription.pending_promo_code}</code> — applied at your next checkout
              </dd>
            </>
          ) : null}
        </dl>
      </section>

      {trial.on_trial ? (
        <section class="card" aria-labelledby="trial-heading">
          <h2 id="trial-heading">{`Free trial: ${trial.days_remaining} ${trial.days_remaining === 1 ? "day" : "days"} left`}</h2>
          <p>
            Your trial of {trial.plan === "pro" ? "Pro" : trial.plan} ends on{" "}
            <When iso={trial.trial_ends_at} />.{" "}
            {trial.at_trial_end === "subscription_starts"
              ? "Your subscription then starts with the payment method on file."
              : "Without a payment method your institution then goes back to Free: add one in the billing portal to keep Pro."}
          </p>
        </section>
      ) : null}

      {institution.plan === "enterprise" ? (
        <section class="card">
          <h2>Enterprise contract</h2>
          <p>
            Your plan, limits and seats are set by your contract: to change them, contact your account
            manager.
          </p>
        </section>
      ) : !live && configured && mayWrite && pro ? (
        <section class="card" aria-labelledby="upgrade-heading">
          <h2 id="upgrade-heading">Upgrade to {pro.name}</h2>
          <p>{pro.description}</p>
          {pro.trial_days > 0 && subscription.status === "none" ? (
            <p>{`Your first subscription starts with a ${pro.trial_days}-day free trial.`}</p>
          ) : null}
          <form method="post" action={CHECKOUT_PATH}>
            <CsrfField token={session.csrf} />
            <fieldset>
              <legend>{LABELS.interval}</legend>
              {pro.prices.map((price) => (
                <label class="check">
                  <input
                    type="radio"
                    name="interval"
                    value={price.interval}
                    checked={form.interval === price.interval}
                  />
                  <span>
                    {price.interval === "month" ? "Monthly" : "Yearly"}
                    <small>{`${money(price.unit_amount, price.currency, institution.locale)} per seat a ${price.interval}`}</small>
                  </span>
                </label>
              ))}
            </fieldset>
            <label for="seats">{LABELS.seats}</label>
            <p class="hint" id="seats-hint">
              At least your {memberCount} invited and active members; you can change it later in the billing
              portal.
            </p>
            <input
              id="seats"
              name="seats"
              type="number"
              min={1}
              max={MAX_SEATS}
              value={form.seats}
              aria-describedby="seats-hint"
              required
            />
            <label for="promo_code">{LABELS.promo_code}</label>
            <p class="hint" id="promo-hint">
              Optional; you can also enter one on Stripe's page.
            </p>
            <input
              id="promo_code"
              name="promo_code"
              type="text"
              maxlength={200}
              value={form.promoCode}
              aria-describedby="promo-hint"
            />
            <div class="actions">
              <button type="submit">Continue to checkout</button>
            </div>
            <p class="hint">You go to Stripe's secure checkout page and come back here afterwards.</p>
          </form>
        </section>
      ) : null}

      {configured && mayWrite && subscription.status !== "none" ? (
        <section class="card" aria-labelledby="portal-heading">
          <h2 id="portal-heading">Invoices, payment methods and changes</h2>
          <p>
            Stripe's billing portal shows your invoices and lets you change the payment method, the seats or
            the plan, or cancel.
          </p>
          <form method="post" action={PORTAL_PATH}>
            <CsrfField token={session.csrf} />
            <button type="submit">Open the billing portal</button>
          </form>
        </section>
      ) : null}

      {configured && mayWrite && institution.plan !== "enterprise" ? (
        <section class="card" aria-labelledby="promo-heading">
          <h2 id="promo-heading">Apply a promotion code</h2>
          {options.promo ? (
            <p class="notice" role="status">
              {options.promo}
            </p>
          ) : null}
          <form method="post" action={PROMO_PATH}>
            <CsrfField token={session.csrf} />
            <label for="code">{LABELS.code}</label>
            <p class="hint" id="code-hint">
              {live ? "Applied to your subscription." : "Kept for your next checkout."}
            </p>
            <input id="code" name="code" type="text" maxlength={200} required aria-describedby="code-hint" />
            <div class="actions">
              <button type="submit" class="secondary">
                Apply code
              </button>
            </div>
          </form>
        </section>
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
