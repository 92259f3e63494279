// The REST routes of the emulated `https://api.stripe.com`: method, path pattern and handler. A handler
// gets the stand-in (`s`), the path's ids and the decoded parameters, and answers a stored object or a
// list (the server presents it with `expand[]`).
import { createPrice, createProduct, listPrices, listProducts } from "./catalog.mjs";
import {
  createCheckoutSession,
  expireSession,
  listCheckoutSessions,
  listSessionLineItems,
  refreshSession,
} from "./checkout.mjs";
import { createCustomer, listCustomerPaymentMethods, listCustomers, updateCustomer } from "./customers.mjs";
import { checkKnown } from "./form.mjs";
import { listInvoices } from "./invoices.mjs";
import { createPortalSession } from "./portal.mjs";
import {
  createCoupon,
  createPromotionCode,
  listCoupons,
  listPromotionCodes,
  refreshCoupon,
  updatePromotionCode,
} from "./promotions.mjs";
import { paginate } from "./store.mjs";
import { cancelSubscription, listSubscriptions, updateSubscription } from "./subscriptions.mjs";

/** A retrieve: only `expand[]` is accepted. */
function retrieve(kind, noun = kind, refresh = (_s, o) => o) {
  return (s, [id], p) => {
    checkKnown(p, ["expand"]);
    return refresh(s, s.store.get(kind, id, { noun }));
  };
}

const customerRetrieve = (s, [id], p) => {
  checkKnown(p, ["expand"]);
  return s.store.get("customer", id);
};

export const routes = [
  ["POST", "/v1/products", (s, _, p) => createProduct(s, p)],
  ["GET", "/v1/products", (s, _, p) => listProducts(s, p)],
  ["GET", "/v1/products/:id", retrieve("product")],
  ["POST", "/v1/prices", (s, _, p) => createPrice(s, p)],
  ["GET", "/v1/prices", (s, _, p) => listPrices(s, p)],
  ["GET", "/v1/prices/:id", retrieve("price")],
  ["POST", "/v1/customers", (s, _, p) => createCustomer(s, p)],
  ["GET", "/v1/customers", (s, _, p) => listCustomers(s, p)],
  ["GET", "/v1/customers/:id", customerRetrieve],
  ["POST", "/v1/customers/:id", (s, [id], p) => updateCustomer(s, id, p)],
  ["GET", "/v1/customers/:id/payment_methods", (s, [id], p) => listCustomerPaymentMethods(s, id, p)],
  ["GET", "/v1/payment_methods/:id", retrieve("payment_method")],
  ["POST", "/v1/checkout/sessions", (s, _, p) => createCheckoutSession(s, p)],
  ["GET", "/v1/checkout/sessions", (s, _, p) => listCheckoutSessions(s, p)],
  ["GET", "/v1/checkout/sessions/:id", retrieve("checkout.session", "checkout.session", refreshSession)],
  ["GET", "/v1/checkout/sessions/:id/line_items", (s, [id], p) => listSessionLineItems(s, id, p)],
  [
    "POST",
    "/v1/checkout/sessions/:id/expire",
    (s, [id], p) => {
      checkKnown(p, ["expand"]);
      return expireSession(s, id);
    },
  ],
  ["POST", "/v1/billing_portal/sessions", (s, _, p) => createPortalSession(s, p)],
  ["POST", "/v1/coupons", (s, _, p) => createCoupon(s, p)],
  ["GET", "/v1/coupons", (s, _, p) => listCoupons(s, p)],
  ["GET", "/v1/coupons/:id", retrieve("coupon", "coupon", refreshCoupon)],
  ["POST", "/v1/promotion_codes", (s, _, p) => createPromotionCode(s, p)],
  ["GET", "/v1/promotion_codes", (s, _, p) => listPromotionCodes(s, p)],
  ["GET", "/v1/promotion_codes/:id", retrieve("promotion_code")],
  ["POST", "/v1/promotion_codes/:id", (s, [id], p) => updatePromotionCode(s, id, p)],
  ["GET", "/v1/subscriptions", (s, _, p) => listSubscriptions(s, p)],
  ["GET", "/v1/subscriptions/:id", retrieve("subscription")],
  ["POST", "/v1/subscriptions/:id", (s, [id], p) => updateSubscription(s, id, p)],
  ["DELETE", "/v1/subscriptions/:id", (s, [id], p) => cancelSubscription(s, id, p)],
  ["GET", "/v1/invoices", (s, _, p) => listInvoices(s, p)],
  ["GET", "/v1/invoices/:id", retrieve("invoice")],
  ["GET", "/v1/discounts/:id", retrieve("discount")],
  ["GET", "/v1/events", (s, _, p) => listEvents(s, p)],
  ["GET", "/v1/events/:id", retrieve("event")],
];

function listEvents(s, p) {
  checkKnown(p, [
    "type",
    "types",
    "limit",
    "starting_after",
    "ending_before",
    "expand",
    "created",
    "delivery_success",
  ]);
  const types = p.types === undefined ? undefined : [p.types].flat();
  const matches = (type) => {
    if (!p.type) return true;
    // `type` may end in `.*` (`customer.subscription.*`).
    return p.type.endsWith(".*") ? type.startsWith(p.type.slice(0, -1)) : type === p.type;
  };
  const items = s.store.all("event").filter((e) => matches(e.type) && (!types || types.includes(e.type)));
  return paginate(items, p, "/v1/events");
}

/** The handler for `method` `path`, with the path's ids; undefined when no route matches. */
export function matchRoute(method, path) {
  const parts = path.split("/").filter(Boolean);
  let pathMatched = false;
  for (const [m, pattern, handler] of routes) {
    const want = pattern.split("/").filter(Boolean);
    if (want.length !== parts.length) continue;
    const ids = [];
    let ok = true;
    for (let i = 0; i < want.length && ok; i++) {
      if (want[i].startsWith(":")) ids.push(decodeURIComponent(parts[i]));
      else ok = want[i] === parts[i];
    }
    if (!ok) continue;
    pathMatched = true;
    if (m === method) return { handler, ids };
  }
  return pathMatched ? { methodNotAllowed: true } : undefined;
}
