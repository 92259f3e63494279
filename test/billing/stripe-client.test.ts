import { env } from "cloudflare:test";
import Stripe from "stripe";
import { describe, expect, it } from "vitest";
import { stripeCryptoProvider, stripeFor } from "../../src/domains/billing/stripe-client";
import { backgroundContext } from "../../src/platform/service/context";

const execution = { waitUntil: (promise: Promise<unknown>) => void promise.catch(() => undefined) };

function contextWith(vars: Record<string, string>) {
  return backgroundContext({ ...env, ...vars }, execution, "queue");
}

describe("the Stripe client", () => {
  it("uses the fetch HTTP client and Web Crypto, as Workers need", async () => {
    const stripe = await stripeFor(contextWith({ STRIPE_SECRET_KEY: "sk_test_client", STRIPE_API_BASE: "" }));
    // The SDK's Node client (http/https modules) would hang a Workers bundle.
    expect(stripe.getApiField("httpClient").getClientName()).toBe("fetch");
    expect(await stripeCryptoProvider()).toBeInstanceOf(Stripe.createSubtleCryptoProvider().constructor);
    expect(stripe.getApiField("host")).toBe("api.stripe.com");
  });

  it("talks to STRIPE_API_BASE when it is set (the local stand-in)", async () => {
    const stripe = await stripeFor(
      contextWith({ STRIPE_SECRET_KEY: "sk_test_client", STRIPE_API_BASE: "http://127.0.0.1:12111" }),
    );
    expect(stripe.getApiField("host")).toBe("127.0.0.1");
    expect(stripe.getApiField("port")).toBe("12111");
    expect(stripe.getApiField("protocol")).toBe("http");
  });

  it("refuses plain http to anything but loopback, and answers billing_not_configured without a key", async () => {
    await expect(
      stripeFor(contextWith({ STRIPE_SECRET_KEY: "sk_test_x", STRIPE_API_BASE: "http://10.0.0.1" })),
    ).rejects.toThrow(/STRIPE_API_BASE/);
    await expect(stripeFor(contextWith({ STRIPE_SECRET_KEY: "" }))).rejects.toThrow(
      /Billing is not configured/,
    );
  });
});
