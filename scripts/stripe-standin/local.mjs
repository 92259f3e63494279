// The stand-in's local settings, shared by the test run (vitest.config.ts), `npm run dev`
// (scripts/dev.mjs, scripts/dev-vars.mjs) and the helpers: fixed, obviously local keys that no real
// Stripe account has, the demo price ids, and the default port (stripe-mock's).
export const LOCAL_SECRET_KEY = "sk_test_standin_local_0000000000000000000000000000";
export const LOCAL_WEBHOOK_SECRET = "whsec_standin_local_00000000000000000000000000";
export const LOCAL_PORT = 12111;

/** The worker's Stripe bindings for a stand-in at `url` (`http://127.0.0.1:<port>`). */
export function standInBindings(url) {
  return {
    STRIPE_API_BASE: url,
    STRIPE_SECRET_KEY: LOCAL_SECRET_KEY,
    STRIPE_WEBHOOK_SECRET: LOCAL_WEBHOOK_SECRET,
    STRIPE_PRICE_PRO_MONTH: "price_pro_month",
    STRIPE_PRICE_PRO_YEAR: "price_pro_year",
  };
}
