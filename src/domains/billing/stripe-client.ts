import Stripe from "stripe";
import { ApiError } from "../../platform/errors";
import type { ServiceContext } from "../../platform/service/context";

/**
 * The one Stripe client of this isolate and settings, on Workers' terms: the SDK's fetch-based
 * HTTP client (its Node client cannot run on workerd, and a bundle that picks it can hang) and Web
 * Crypto for webhook signatures. With STRIPE_API_BASE set it talks to that host instead of
 * api.stripe.com — the local stand-in in development and tests; nothing else here knows it exists.
 */
export const stripeCryptoProvider = Stripe.createSubtleCryptoProvider();

const clients = new WeakMap<object, Stripe>();

/** The settings billing needs, or 503 `billing_not_configured` when the deployment has no key. */
export function billingSettings(ctx: ServiceContext) {
  const billing = ctx.config.billing;
  if (!billing.secretKey) {
    throw new ApiError("billing_not_configured", "Billing is not configured on this deployment.");
  }
  return { ...billing, secretKey: billing.secretKey };
}

export function stripeFor(ctx: ServiceContext): Stripe {
  let client = clients.get(ctx.config);
  if (!client) {
    const { secretKey, apiBase } = billingSettings(ctx);
    client = new Stripe(secretKey, {
      httpClient: Stripe.createFetchHttpClient(),
      // Stripe's own retries, with its idempotency keys: a network failure never charges twice.
      maxNetworkRetries: 2,
      timeout: 10_000,
      appInfo: { name: "Lingua API" },
      ...(apiBase
        ? {
            host: apiBase.hostname,
            port: apiBase.port || (apiBase.protocol === "https:" ? "443" : "80"),
            protocol: apiBase.protocol === "https:" ? "https" : "http",
          }
        : {}),
    });
    clients.set(ctx.config, client);
  }
  return client;
}
