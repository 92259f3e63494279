/** The stand-in's fixed local API key (`sk_test_…`; no real Stripe account has it). */
export const LOCAL_SECRET_KEY: string;
/** The stand-in's fixed local webhook signing secret (`whsec_…`). */
export const LOCAL_WEBHOOK_SECRET: string;
/** The port `npm run dev` starts the stand-in on when it is free (stripe-mock's, 12111). */
export const LOCAL_PORT: number;
/** The worker's Stripe bindings for a stand-in at `url`. */
export function standInBindings(url: string): {
  STRIPE_API_BASE: string;
  STRIPE_SECRET_KEY: string;
  STRIPE_WEBHOOK_SECRET: string;
  STRIPE_PRICE_PRO_MONTH: string;
  STRIPE_PRICE_PRO_YEAR: string;
};
