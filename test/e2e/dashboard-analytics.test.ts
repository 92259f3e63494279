/**
 * The dashboard's analytics, billing and institution settings in a real browser (Debian's chromium
 * driven by playwright-core) against the run's shared `npm run dev`: the demo institution's analytics
 * drawn as SVG charts with data marks, the range changed through the picker, the print view; billing
 * → checkout at the Stripe stand-in (left unpaid); a branding change in the settings seen on the
 * analytics page. Every page is screenshotted under test-artifacts/dashboard-analytics/ (git-ignored);
 * no console error, no CSP violation, no request off loopback. One browser.
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DEMO_PASSWORD } from "../../scripts/demo-data.mjs";
import { signIn, type WatchedBrowser, watchedBrowser } from "./helpers/browser";
import { readySharedDevServer, type SharedDevServer } from "./helpers/shared-dev-server";

const ADMIN = "owner@acme.lingua.test";
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

let server: SharedDevServer;
/** Chromium, whose pages record console errors, page errors and CSP violations. */
let chromium: WatchedBrowser;
let page: Page;

beforeAll(async () => {
  [server, chromium] = await Promise.all([
    readySharedDevServer(),
    watchedBrowser({
      artifacts: "dashboard-analytics",
      // The dashboard's origin, and the Stripe stand-in's (another loopback port); nothing else.
      allow: (url) => url.protocol === "data:" || LOOPBACK.has(url.hostname),
      consoleUrl: true,
    }),
  ]);
  ({ page } = await chromium.openContext());
  await signIn(page, server.url, ADMIN);
}, 700_000);

afterAll(async () => {
  await chromium?.close();
});

const shot = (name: string) => chromium.shot(page, name);

/** The data marks drawn in a chart (`#chart-…`). */
function marks(chart: string) {
  return page.locator(`#${chart} svg .mark`).count();
}

it("draws the demo institution's analytics as SVG charts with data marks", async () => {
  await page
    .getByRole("navigation", { name: "Dashboard sections" })
    .getByRole("link", { name: "Analytics" })
    .click();
  await page.waitForURL(/\/dashboard\/analytics$/);
  await page.getByRole("heading", { level: 1, name: "Acme Academy · Analytics" }).waitFor();
  expect(await page.locator("figure.chart svg").count()).toBe(6);
  // 30 days, one dot each; the demo learners practised on them.
  expect(await marks("chart-active")).toBe(30);
  expect(await marks("chart-minutes")).toBe(30);
  expect(await marks("chart-cefr")).toBeGreaterThan(0);
  expect(await marks("chart-courses")).toBeGreaterThan(0);
  expect(await marks("chart-groups")).toBeGreaterThan(0);
  const active = await page.locator(".kpi").first().locator("strong").textContent();
  expect(Number(active?.replace(/\D/g, ""))).toBeGreaterThan(0);
  // A bar of a day with practice has height; the marks are drawn, not only placed.
  const heights: number[] = await page
    .locator("#chart-minutes svg rect.mark")
    .evaluateAll((rects: any[]) => rects.map((r) => Number(r.getAttribute("height"))));
  expect(Math.max(...heights)).toBeGreaterThan(10);
  // Each chart's figures as a table, one click away.
  await page.getByText("Active learners: the figures as a table").click();
  expect(await page.locator("#chart-active table tbody tr").count()).toBe(30);
  await shot("01-analytics");
  await page.setViewportSize({ width: 390, height: 844 });
  await shot("02-analytics-phone");
  await page.setViewportSize({ width: 1280, height: 900 });
});

it("changes the range with a preset and a custom range", async () => {
  await page.getByLabel("Range", { exact: true }).selectOption("7");
  // The custom dates are shown only with "Custom range" (the script); without it they are always there.
  expect(await page.locator("#custom-range").isHidden()).toBe(true);
  await page.getByRole("button", { name: "Show" }).click();
  await page.waitForURL(/preset=7/);
  expect(await marks("chart-active")).toBe(7);
  await shot("03-analytics-7-days");

  await page.getByLabel("Range", { exact: true }).selectOption("custom");
  expect(await page.locator("#custom-range").isVisible()).toBe(true);
  const to = await page.getByLabel("To", { exact: true }).inputValue();
  const from = new Date(Date.parse(`${to}T00:00:00Z`) - 27 * 86_400_000).toISOString().slice(0, 10);
  await page.getByLabel("From", { exact: true }).fill(from);
  await page.getByLabel("Points").selectOption("week");
  await page.getByRole("button", { name: "Show" }).click();
  await page.waitForURL(/preset=custom/);
  expect(await page.locator(".brand-band").textContent()).toContain(`${from} to ${to}`);
  const weeks = await marks("chart-active");
  expect(weeks).toBeGreaterThanOrEqual(4);
  expect(weeks).toBeLessThanOrEqual(5);
  await shot("04-analytics-custom-weeks");
});

it("has a print view without the navigation or the form, that prints the tables", async () => {
  await page.getByRole("link", { name: "Print view" }).click();
  await page.waitForURL(/view=print/);
  expect(await page.getByRole("navigation", { name: "Dashboard sections" }).count()).toBe(0);
  expect(await page.locator("form.range-picker").count()).toBe(0);
  expect(await page.getByRole("button", { name: "Print" }).isVisible()).toBe(true);
  await page.emulateMedia({ media: "print" });
  expect(await page.getByRole("button", { name: "Print" }).isVisible()).toBe(false);
  expect(await page.locator("#chart-groups table").isVisible()).toBe(true);
  await shot("05-analytics-print");
  await page.emulateMedia({ media: "screen" });
  await page.getByRole("link", { name: "Back to the dashboard" }).click();
  await page.waitForURL(/\/dashboard\/analytics\?/);
});

it("opens checkout at the Stripe stand-in from the billing page", async () => {
  await page
    .getByRole("navigation", { name: "Dashboard sections" })
    .getByRole("link", { name: "Billing" })
    .click();
  await page.getByRole("heading", { name: "Your plan" }).waitFor();
  await shot("06-billing");
  await page.getByRole("radio", { name: /^Yearly/ }).check();
  await page.getByRole("button", { name: "Continue to checkout" }).click();
  await page.waitForURL(/\/checkout\/cs_test_/);
  const checkout = new URL(page.url());
  expect(checkout.origin).not.toBe(server.url);
  expect(LOOPBACK.has(checkout.hostname)).toBe(true);
  await shot("07-checkout-stand-in");
  // Left unpaid: back to the dashboard, where nothing changed.
  await page.goto(`${server.url}/dashboard/settings/billing`);
  expect(await page.getByText("No subscription").count()).toBe(1);
});

it("changes the branding in the settings, and analytics wears it", async () => {
  await page
    .getByRole("navigation", { name: "Dashboard sections" })
    .getByRole("link", { name: "Institution" })
    .click();
  await page.getByRole("heading", { name: "Institution settings" }).waitFor();
  await shot("08-settings");
  const original = {
    displayName: await page.getByLabel("Display name").inputValue(),
    primary: await page.getByLabel("Primary colour").inputValue(),
  };
  try {
    await page.getByLabel("Display name").fill("Acme E2E Academy");
    await page.getByLabel("Primary colour").fill("#0b7a3e");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByText("The settings were saved.").waitFor();
    await shot("09-settings-saved");

    await page.goto(`${server.url}/dashboard/analytics`);
    await page.getByRole("heading", { level: 1, name: "Acme E2E Academy · Analytics" }).waitFor();
    expect(
      await page
        .locator(".brand-band")
        .evaluate((el: any) => (globalThis as any).getComputedStyle(el).backgroundColor),
    ).toBe("rgb(11, 122, 62)");
    expect(await page.locator("#chart-active svg circle.mark").first().getAttribute("fill")).toBe("#0b7a3e");
    await shot("10-analytics-rebranded");
  } finally {
    // The demo's branding back, for the other files of the run (through the API, whatever failed).
    const signedIn = await fetch(`${server.url}/api/auth/sign-in`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ email: ADMIN, password: DEMO_PASSWORD }),
    });
    const { token, user } = (await signedIn.json()) as { token: string; user: { institution_id: string } };
    const restored = await fetch(`${server.url}/api/institutions/${user.institution_id}`, {
      method: "PATCH",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
      body: JSON.stringify({
        branding: { display_name: original.displayName || null, primary_color: original.primary || null },
      }),
    });
    expect(restored.status).toBe(200);
  }
});

it("saw no console error, no CSP violation and no request off loopback", () => {
  expect(chromium.problems).toEqual([]);
  expect(chromium.blocked).toEqual([]);
});
