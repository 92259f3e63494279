// A local Stripe stand-in for development and tests (never in the worker bundle): a small Node HTTP
// server that the official `stripe` SDK talks to as if it were https://api.stripe.com, through its
// `host`/`port`/`protocol` options (the worker's `STRIPE_API_BASE`).
//
//   const standIn = await startStripeStandIn({ secretKey: "sk_test_…", webhookSecret: "whsec_…" });
//   new Stripe(key, { host: "127.0.0.1", port, protocol: "http", httpClient: Stripe.createFetchHttpClient() })
//
// It speaks Stripe's wire: form-encoded bodies with bracket notation, JSON objects with `object` and
// Stripe-shaped ids, Stripe's error shape and statuses, `Authorization: Bearer <secretKey>` (401
// otherwise), `Idempotency-Key` (replay with `Idempotent-Replayed: true`; other parameters → 400
// `idempotency_error`), `expand[]`, lists with `data`/`has_more`/`limit`/`starting_after`. Objects have
// the shape of API version 2026-10-28.endive (the `stripe` SDK v23's): periods on subscription items,
// a promotion code's coupon under `promotion.coupon`, a discount's under `source.coupon`, an
// invoice's subscription under `parent.subscription_details.subscription`.
//
// REST API (/v1): products (create, retrieve, list); prices (create, retrieve, list by `lookup_keys[]`,
// `active`, `product`); customers (create, retrieve, update, list; `/payment_methods`); checkout
// sessions (create in subscription mode, retrieve, list, `/line_items`, `/expire`); billing portal
// sessions (create); coupons and promotion codes (create, retrieve, list; promotion codes update);
// subscriptions (retrieve, list, update, cancel with DELETE); invoices, discounts, payment methods
// and events (retrieve; invoices and events list).
//
// Hosted pages: `GET <checkout session url>` (`/checkout/cs_test_…`) shows the plan, price, seats, trial
// and discount; its form posts `action=pay` (the subscription starts; events; 303 to `success_url`
// with `{CHECKOUT_SESSION_ID}` filled in) or `action=cancel` (303 to `cancel_url`); `promotion_code=`
// when the session allows codes; `card=on|off` where a card is optional (card-less trials).
// `GET <portal session url>` (`/portal/bps_…`): cancel at period end, cancel now, change seats or
// interval; each answers 303 to `return_url`.
//
// Events: every change stores an `evt_…` and a delivery signed with `webhookSecret`
// (`Stripe-Signature: t=…,v1=…`); with `webhookUrl` each is POSTed there in order (retried 3 times).
// Control API (/_standin, JSON): see control.mjs — deliveries, life-cycle moves, test promotion codes.
//
// Seeded (`seed`, the default):
//   prod_lingua_pro   product "Lingua Pro"
//   price_pro_month   900 EUR minor units a month per seat, lookup_key pro_month
//   price_pro_year    9,000 EUR minor units a year per seat, lookup_key pro_year
//   WELCOME20         promotion code of coupon `welcome20`: 20 % off, repeating 3 months
//   EXPIRED10         promotion code of coupon `expired10`: 10 % off, expired
import { Events } from "./events.mjs";
import { seedCatalog } from "./seed.mjs";
import { createStandInServer } from "./server.mjs";
import { Store } from "./store.mjs";

export { API_VERSION, signPayload } from "./events.mjs";

/** The demo catalogue's ids. */
export const SEEDED = {
  product: "prod_lingua_pro",
  priceMonth: "price_pro_month",
  priceYear: "price_pro_year",
  welcomeCode: "WELCOME20",
  expiredCode: "EXPIRED10",
};

export async function startStripeStandIn({
  port = 0,
  host = "127.0.0.1",
  secretKey,
  webhookSecret,
  webhookUrl,
  seed = true,
  log = () => {},
} = {}) {
  if (!secretKey) throw new Error("startStripeStandIn: secretKey is required");
  if (!webhookSecret) throw new Error("startStripeStandIn: webhookSecret is required");
  const store = new Store();
  let baseUrl = "";
  const now = () => Math.floor(Date.now() / 1000);
  const events = new Events({ store, now, webhookSecret, webhookUrl, log });
  const s = {
    store,
    events,
    now,
    log,
    request: null,
    baseUrl: () => baseUrl,
    emit: (type, object, previous) => events.emit(type, object, previous, s.request),
  };
  if (seed) seedCatalog(s);
  const server = createStandInServer(s, { secretKey });
  let unref = false;
  server.on("connection", (socket) => {
    if (unref) socket.unref();
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve(undefined));
  });
  const address = server.address();
  const shownHost = host.includes(":") ? `[${host}]` : host;
  baseUrl = `http://${shownHost}:${address.port}`;
  return {
    url: baseUrl,
    host,
    port: address.port,
    secretKey,
    webhookSecret,
    /** Every delivery so far (the control API's `/_standin/deliveries` reads the same list). */
    deliveries: (filter) => events.list(filter),
    /** Waits until the deliveries to `webhookUrl` under way are sent (or given up). */
    settle: () => events.settle(),
    /** Lets the process exit while the stand-in still listens (a test run's stand-in). */
    unref: () => {
      unref = true;
      server.unref();
    },
    close: () =>
      new Promise((resolve) => {
        events.closed = true;
        server.closeAllConnections();
        server.close(() => resolve(undefined));
      }),
  };
}
