// Billing portal sessions, and what the portal's forms do: cancel, renew or change the subscription.
import { readUrl } from "./checkout-params.mjs";
import { StripeError } from "./errors.mjs";
import { checkKnown, readString } from "./form.mjs";
import { newId } from "./store.mjs";
import { cancelSubscription, updateSubscription } from "./subscriptions.mjs";

/** `POST /v1/billing_portal/sessions`. */
export function createPortalSession(s, p) {
  checkKnown(p, [
    "customer",
    "return_url",
    "configuration",
    "flow_data",
    "locale",
    "on_behalf_of",
    "expand",
    "customer_account",
  ]);
  const customer = s.store.get("customer", readString(p.customer, "customer", { required: true }), {
    param: "customer",
  });
  const id = newId("bps_", 24);
  return s.store.put({
    id,
    object: "billing_portal.session",
    configuration: "bpc_standin",
    created: s.now(),
    customer: customer.id,
    customer_account: null,
    flow: null,
    livemode: false,
    locale: readString(p.locale, "locale") ?? null,
    on_behalf_of: null,
    return_url: readUrl(p.return_url, "return_url", false),
    url: `${s.baseUrl()}/portal/${id}`,
  });
}

/** The portal's subscriptions: those of its customer that have not ended. */
export function portalSubscriptions(s, session) {
  return s.store
    .all("subscription")
    .filter((o) => o.customer === session.customer && o.status !== "canceled");
}

/**
 * A portal form: `action` = `cancel_at_period_end` | `renew` (undo it) | `cancel_now` | `update`
 * (`price`, `quantity`), on `subscription`. Answers the URL to return to.
 */
export function portalAction(s, id, form) {
  const session = s.store.get("billing_portal.session", id, { noun: "billing_portal.session" });
  if (form.action !== "return") {
    const sub = portalSubscriptions(s, session).find((o) => o.id === form.subscription);
    if (!sub) throw StripeError.missingParam("subscription", form.subscription, "subscription");
    if (form.action === "cancel_at_period_end")
      updateSubscription(s, sub.id, { cancel_at_period_end: "true" });
    else if (form.action === "renew") updateSubscription(s, sub.id, { cancel_at_period_end: "false" });
    else if (form.action === "cancel_now") cancelSubscription(s, sub.id);
    else if (form.action === "update") {
      const change = { id: sub.items.data[0].id };
      if (form.price) change.price = form.price;
      if (form.quantity) change.quantity = form.quantity;
      updateSubscription(s, sub.id, { items: [change], proration_behavior: "create_prorations" });
    } else throw StripeError.invalid("Unknown action.", "action");
  }
  return session.return_url ?? `${s.baseUrl()}/portal/${id}`;
}
