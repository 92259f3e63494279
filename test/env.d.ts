import type { D1Migration } from "cloudflare:test";

declare global {
  namespace Cloudflare {
    interface Env {
      TEST_MIGRATIONS: D1Migration[];
    }
  }
}

declare module "vitest" {
  export interface ProvidedContext {
    /** wrangler.toml's [vars], as `wrangler deploy` reads them (vitest.config.ts). */
    shippedVars: Record<string, string>;
    /** What `npm run dev` writes to a fresh .dev.vars (scripts/dev-vars.mjs). */
    devVars: Record<string, string>;
    /** The run's Stripe stand-in (vitest.config.ts; test/helpers/stripe.ts is its client). */
    stripeUrl: string;
  }
}
