import type { listPlans } from "../../domains/billing/plans";
import { MAX_SEATS } from "../../domains/billing/schemas";
import type { readSubscription } from "../../domains/billing/subscription-read";
import type { trialStatus } from "../../domains/billing/trial";
import { CsrfField, When } from "../layout";
import { BILLING_PATH } from "../prefixes";

/** The billing page's cards: the plan, the trial, the upgrade's checkout form, the portal and promotion codes. */

export const CHECKOUT_PATH = `${BILLING_PATH}/checkout`;
export const PORTAL_PATH = `${BILLING_PATH}/portal`;
export const PROMO_PATH = `${BILLING_PATH}/promo`;
export const LABELS = {
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

function money(amount: number, currency: string, locale = "en"): string {
  try {
    return new Intl.NumberFormat(locale, { style: "currency", currency: currency.toUpperCase() }).format(
      amount / 100,
    );
  } catch {
    return `${(amount / 100).toFixed(2)} ${currency.toUpperCase()}`;
  }
}

export interface UpgradeForm {
  interval: string;
  seats: string;
  promoCode: string;
}

type Subscription = Awaited<ReturnType<typeof readSubscription>>;
type Plan = Awaited<ReturnType<typeof listPlans>>[number];
type Trial = Awaited<ReturnType<typeof trialStatus>>;

export function NotConfiguredCard() {
  return (
    <div class="card" role="status">
      <h2>Billing is not set up on this deployment</h2>
      <p>
        Plans can't be bought here yet: the deployment has no Stripe key and prices (
        <code>billing_not_configured</code>). Your plan stays as it is; ask whoever runs this Lingua
        deployment to configure Stripe.
      </p>
    </div>
  );
}

export function PlanCard({
  subscription,
  current,
  memberCount,
  seats,
  locale,
  live,
}: {
  subscription: Subscription;
  current: Plan | undefined;
  memberCount: number;
  /** The institution's seat limit (invited or active members at once), if any. */
  seats: number | null;
  locale: string;
  live: boolean;
}) {
  return (
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
          {seats !== null ? ` · at most ${seats} invited or active at once` : " · no seat limit"}
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
                : `${money(subscription.discount.amount_off ?? 0, subscription.discount.currency ?? "eur", locale)} off`}
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
  );
}

export function TrialCard({ trial }: { trial: Trial }) {
  return (
    <section class="card" aria-labelledby="trial-heading">
      <h2 id="trial-heading">{`Free trial: ${trial.days_remaining} ${trial.days_remaining === 1 ? "day" : "days"} left`}</h2>
      <p>
        Your trial of {trial.plan === "pro" ? "Pro" : trial.plan} ends on <When iso={trial.trial_ends_at} />.{" "}
        {trial.at_trial_end === "subscription_starts"
          ? "Your subscription then starts with the payment method on file."
          : "Without a payment method your institution then goes back to Free: add one in the billing portal to keep Pro."}
      </p>
    </section>
  );
}

export function EnterpriseCard() {
  return (
    <section class="card">
      <h2>Enterprise contract</h2>
      <p>
        Your plan, limits and seats are set by your contract: to change them, contact your account manager.
      </p>
    </section>
  );
}

export function UpgradeCard({
  pro,
  subscription,
  form,
  memberCount,
  locale,
  csrf,
}: {
  pro: Plan;
  subscription: Subscription;
  form: UpgradeForm;
  memberCount: number;
  locale: string;
  csrf: string;
}) {
  return (
    <section class="card" aria-labelledby="upgrade-heading">
      <h2 id="upgrade-heading">Upgrade to {pro.name}</h2>
      <p>{pro.description}</p>
      {pro.trial_days > 0 && subscription.status === "none" ? (
        <p>{`Your first subscription starts with a ${pro.trial_days}-day free trial.`}</p>
      ) : null}
      <form method="post" action={CHECKOUT_PATH}>
        <CsrfField token={csrf} />
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
                <small>{`${money(price.unit_amount, price.currency, locale)} per seat a ${price.interval}`}</small>
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
  );
}

export function PortalCard({ csrf }: { csrf: string }) {
  return (
    <section class="card" aria-labelledby="portal-heading">
      <h2 id="portal-heading">Invoices, payment methods and changes</h2>
      <p>
        Stripe's billing portal shows your invoices and lets you change the payment method, the seats or the
        plan, or cancel.
      </p>
      <form method="post" action={PORTAL_PATH}>
        <CsrfField token={csrf} />
        <button type="submit">Open the billing portal</button>
      </form>
    </section>
  );
}

export function PromoCard({ csrf, live, message }: { csrf: string; live: boolean; message?: string }) {
  return (
    <section class="card" aria-labelledby="promo-heading">
      <h2 id="promo-heading">Apply a promotion code</h2>
      {message ? (
        <p class="notice" role="status">
          {message}
        </p>
      ) : null}
      <form method="post" action={PROMO_PATH}>
        <CsrfField token={csrf} />
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
  );
}
