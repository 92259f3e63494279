import type Stripe from "stripe";
import { ApiError } from "../../platform/errors";
import type { ServiceContext } from "../../platform/service/context";

/**
 * The one Stripe client of this isolate and settings, on Workers' terms: the SDK's fetch-based
 * HTTP client (its Node client cannot run on workerd, and a bundle that picks it can hang) and Web
 * Crypto for webhook signatures. With STRIPE_API_BASE set it talks to that host instead of
 * api.stripe.com — the local stand-in in development and tests; nothing else here knows it exists.
 */
type StripeSdk = typeof import("stripe")["default"];

let sdk: Promise<StripeSdk> | undefined;

/**
 * The SDK, loaded on first use: hundreds of modules that only billing needs, kept out of every
 * other request's and queue invocation's start (and of each test file's).
 */
function loadSdk(): Promise<StripeSdk> {
  sdk ??= import("stripe").then((module) => module.default);
  return sdk;
}

let cryptoProvider: Stripe.CryptoProvider | undefined;

/** Web Crypto for webhook signatures (the SDK's Node crypto is not on workerd). */
export async function stripeCryptoProvider(): Promise<Stripe.CryptoProvider> {
  cryptoProvider ??= (await loadSdk()).createSubtleCryptoProvider();
  return cryptoProvider;
}

/**
 * The kind of a Stripe error (`StripeInvalidRequestError`, `StripeConnectionError`, …), or null for
 * anything else; by the SDK's own `type`, so that checking needs no SDK loaded.
 */
export function stripeErrorType(error: unknown): string | null {
  const type = error instanceof Error ? (error as { type?: unknown }).type : undefined;
  return typeof type === "string" && type.startsWith("Stripe") ? type : null;
}

export type StripeError = InstanceType<StripeSdk["errors"]["StripeError"]>;

export function isStripeError(error: unknown): error is StripeError {
  return stripeErrorType(error) !== null;
}

const clients = new WeakMap<object, Stripe>();

/** The settings billing needs, or 503 `billing_not_configured` when the deployment has no key. */
export function billingSettings(ctx: ServiceContext) {
  const billing = ctx.config.billing;
  if (!billing.secretKey) {
    throw new ApiError("billing_not_configured", "Billing is not configured on this deployment.");
  }
  return { ...billing, secretKey: billing.secretKey };
}

export async function stripeFor(ctx: ServiceContext): Promise<Stripe> {
  let client = clients.get(ctx.config);
  if (!client) {
    const { secretKey, apiBase } = billingSettings(ctx);
    const Stripe = await loadSdk();
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
