import { mkdirSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { DEMO_PASSWORD } from "../../scripts/demo-data.mjs";
import { conformingFetch, OpenApiConformance } from "../helpers/openapi-conformance";
import { launchChromium } from "./helpers/browser";
import { readySharedDevServer, type SharedDevServer } from "./helpers/shared-dev-server";

// Billing as an institution admin meets it under `npm run dev`: a checkout session from the API, the
// local Stripe stand-in's hosted page paid in Chromium, the stand-in's signed webhooks reaching the
// dev server by themselves, and the plan, trial and rate limit that follow on the next request.

const REQUEST_TIMEOUT_MS = 15_000;

/** The run's one `npm run dev` (test/e2e/helpers/shared-dev-server.ts). */
let dev: SharedDevServer;
let served: Promise<OpenApiConformance> | undefined;

beforeAll(async () => {
  dev = await readySharedDevServer();
});

/** A request to the dev server; its response must conform to the served OpenAPI document. */
async function request(path: string, init: RequestInit & { token?: string; json?: unknown } = {}) {
  served ??= fetch(`${dev.url}/api/openapi.json`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
    .then((res) => res.json())
    .then((document) => new OpenApiConformance(document));
  const headers = new Headers(init.headers);
  if (init.token) headers.set("Authorization", `Bearer ${init.token}`);
  if (init.json !== undefined) headers.set("Content-Type", "application/json");
  const body = init.json === undefined ? init.body : JSON.stringify(init.json);
  const res = await conformingFetch(
    new Request(dev.url + path, { ...init, headers, body }),
    (r) => fetch(r, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }),
    () => served!,
  );
  const text = await res.text();
  return { res, text, body: text ? JSON.parse(text) : undefined };
}

describe("billing under npm run dev", () => {
  it("checkout paid on the stand-in's page makes a Free institution Pro on a 14-day trial, with Pro's limit", async () => {
    // Globex is the demo's Free institution.
    const signIn = await request("/api/auth/sign-in", {
      method: "POST",
      json: { email: "owner@globex.lingua.test", password: DEMO_PASSWORD },
    });
    expect(signIn.res.status, signIn.text).toBe(200);
    const token = signIn.body.token as string;
    const before = await request("/api/billing/subscription", { token });
    expect(before.body).toMatchObject({ status: "none", plan: "free" });
    expect(before.res.headers.get("X-RateLimit-Limit")).toBe("100");

    const plans = await request("/api/subscription-plans", { token });
    const pro = plans.body.data.find((plan: { id: string }) => plan.id === "pro");
    expect(pro.prices).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ interval: "month", currency: "eur", unit_amount: 900 }),
      ]),
    );

    // Development allows any loopback origin to come back to.
    const checkout = await request("/api/billing/checkout-session", {
      method: "POST",
      token,
      json: {
        plan: "pro",
        interval: "month",
        success_url: `${dev.url}/healthz?checkout={CHECKOUT_SESSION_ID}`,
        cancel_url: `${dev.url}/healthz?checkout=cancelled`,
      },
    });
    expect(checkout.res.status, checkout.text).toBe(201);
    const session = checkout.body as { id: string; url: string };

    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(error.message));
      await page.goto(session.url);
      expect(await page.textContent("body")).toMatch(/14[- ]day/i);
      mkdirSync("test-artifacts", { recursive: true });
      await page.screenshot({ path: "test-artifacts/billing-checkout.png", fullPage: true });
      await Promise.all([
        page.waitForURL((url) => url.searchParams.get("checkout") === session.id, { timeout: 20_000 }),
        page.click('button[value="pay"]'),
      ]);
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }

    // The stand-in POSTs its signed events to the dev server's webhook by itself.
    await expect
      .poll(async () => (await request("/api/billing/subscription", { token })).body.plan, {
        timeout: 30_000,
        interval: 300,
      })
      .toBe("pro");
    const after = await request("/api/billing/subscription", { token });
    expect(after.body).toMatchObject({ status: "trialing", plan: "pro", interval: "month" });
    expect(after.res.headers.get("X-RateLimit-Limit")).toBe("1000");
    const trial = await request("/api/trial/status", { token });
    expect(trial.body).toMatchObject({ plan: "pro", on_trial: true, days_remaining: 14 });

    // The billing portal opens for the customer that checkout created.
    const portal = await request("/api/billing/portal-session", {
      method: "POST",
      token,
      json: { return_url: `${dev.url}/healthz` },
    });
    expect(portal.res.status, portal.text).toBe(201);
    expect(portal.body.url).toMatch(/\/portal\/bps_/);
  });
});
