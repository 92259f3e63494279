/**
 * The admin dashboard in a real browser (Debian's chromium driven by playwright-core) against
 * `npm run dev` on a loopback port: sign in with the demo admin, create an API token and use it
 * with `fetch` against the API, revoke it and see 401, add a webhook to a loopback receiver and see
 * its test ping in the delivery log, request an export and download it once the page shows it
 * finished, accept an invitation, let platform staff
 * choose an institution, sign out. Every page is screenshotted under test-artifacts/dashboard/
 * (git-ignored); no request may leave the origin, and no console error or CSP violation may occur.
 * One browser, one dev server.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DEMO_PASSWORD } from "../../scripts/demo-data.mjs";
import { signIn, type WatchedBrowser, watchedBrowser } from "./helpers/browser";
import { readySharedDevServer, type SharedDevServer } from "./helpers/shared-dev-server";

const ADMIN = "owner@acme.lingua.test";
const STAFF = "admin@lingua.test";

/** The run's one `npm run dev` (test/e2e/helpers/shared-dev-server.ts). */
let server: SharedDevServer;
/** Chromium, whose contexts record console errors, page errors and CSP violations and stay on the origin. */
let chromium: WatchedBrowser;

beforeAll(async () => {
  [server, chromium] = await Promise.all([
    readySharedDevServer(),
    watchedBrowser({ artifacts: "dashboard", allow: (url) => url.origin === server.url }),
  ]);
}, 400_000);

afterAll(async () => {
  await chromium?.close();
});

it("signs in, creates a token that works against the API, revokes it, and signs out", async () => {
  const { context, page } = await chromium.openContext();
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });

  await page.goto(`${server.url}/dashboard`);
  await page.waitForURL(/\/dashboard\/sign-in/);
  // The e-mail field has the focus.
  expect(await page.evaluate("document.activeElement.id")).toBe("email");
  await chromium.shot(page, "01-sign-in");
  await page.getByLabel("E-mail address", { exact: true }).fill(ADMIN);
  await page.getByLabel("Password").fill(DEMO_PASSWORD);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForURL(`${server.url}/dashboard`);

  // The __Host- session cookie works over http://127.0.0.1 (loopback is a secure context).
  const session = (await context.cookies()).find((c) => c.name === "__Host-lingua_session");
  expect(session).toMatchObject({ httpOnly: true, secure: true, sameSite: "Lax", path: "/" });
  await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toContain("Welcome");
  // The first Tab reaches the skip link, which moves the focus to the page's content.
  await page.keyboard.press("Tab");
  expect(await page.evaluate("document.activeElement.textContent")).toBe("Skip to content");
  await page.keyboard.press("Enter");
  expect(await page.evaluate("document.activeElement.id")).toBe("content");
  await chromium.shot(page, "02-overview");

  await page
    .getByRole("navigation", { name: "Dashboard sections" })
    .getByRole("link", { name: "API tokens" })
    .click();
  await page.waitForURL(/\/settings\/integrations\/tokens$/);
  await chromium.shot(page, "03-tokens");

  await page.getByRole("link", { name: "Create token" }).click();
  await page.getByLabel("Name", { exact: true }).fill("E2E sync");
  await page.getByRole("checkbox", { name: /^members:read/ }).check();
  await page.getByRole("checkbox", { name: /^tokens:read/ }).check();
  // The custom date appears only with "Custom date…" (the script); without the script it is always there.
  await expect.poll(() => page.locator("#custom-expiry").isHidden()).toBe(true);
  await page.getByLabel("Expiry", { exact: true }).selectOption("custom");
  await expect.poll(() => page.locator("#custom-expiry").isVisible()).toBe(true);
  await page.getByLabel("Expiry", { exact: true }).selectOption("30");
  await chromium.shot(page, "04-new-token");
  await page.getByRole("button", { name: "Create token" }).click();
  await page.getByRole("heading", { name: "Token created" }).waitFor();

  const plain = await page.locator("#new-token").inputValue();
  expect(plain).toMatch(/^lng_[A-Za-z0-9_-]{43}$/);
  await page.getByRole("button", { name: "Copy" }).click();
  await expect.poll(() => page.getByRole("button", { name: "Copied" }).count()).toBe(1);
  expect(await page.evaluate("navigator.clipboard.readText()")).toBe(plain);
  await chromium.shot(page, "05-token-created");

  const me = await fetch(`${server.url}/api/auth/me`, { headers: { Authorization: `Bearer ${plain}` } });
  expect(me.status).toBe(200);
  const meBody = (await me.json()) as { token: { id: string; name: string; abilities: string[] } };
  expect(meBody.token.name).toBe("E2E sync");
  expect([...meBody.token.abilities].sort()).toEqual(["members:read", "tokens:read"]);

  await page.getByRole("link", { name: "Back to API tokens" }).click();
  const row = page.getByRole("row").filter({ hasText: plain.slice(0, 10) });
  await row.getByText("Revoke…").click();
  await chromium.shot(page, "06-revoke-confirmation");
  await row.getByRole("button", { name: "Revoke token" }).click();
  await page.getByText("The token was revoked").waitFor();
  await chromium.shot(page, "07-token-revoked");
  const after = await fetch(`${server.url}/api/auth/me`, { headers: { Authorization: `Bearer ${plain}` } });
  expect(after.status).toBe(401);

  // A phone: the same list, one column.
  await page.setViewportSize({ width: 390, height: 844 });
  await chromium.shot(page, "08-tokens-phone");
  await page.setViewportSize({ width: 1280, height: 900 });

  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByText("You have signed out.").waitFor();
  await chromium.shot(page, "09-signed-out");
  expect((await context.cookies()).some((c) => c.name === "__Host-lingua_session")).toBe(false);
  await context.close();
});

it("adds a webhook to a loopback receiver, sends a test ping and finds it in the delivery log", async () => {
  const received: string[] = [];
  const receiver: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      received.push(body);
      res.writeHead(200, { "Content-Type": "text/plain" }).end("pong from e2e");
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/lingua`;
  try {
    const { context, page } = await chromium.openContext();
    await signIn(page, server.url, ADMIN);
    await page
      .getByRole("navigation", { name: "Dashboard sections" })
      .getByRole("link", { name: "Webhooks" })
      .click();
    await chromium.shot(page, "13-webhooks");
    await page.getByRole("link", { name: "Add webhook" }).click();
    await page.getByLabel("URL", { exact: true }).fill(hookUrl);
    await page.getByLabel("Description").fill("E2E receiver");
    await page.getByRole("checkbox", { name: /^lesson\.completed/ }).check();
    await chromium.shot(page, "14-new-webhook");
    await page.getByRole("button", { name: "Add webhook" }).click();
    await page.getByRole("heading", { name: "Webhook added" }).waitFor();
    expect(await page.locator("#secret").inputValue()).toMatch(/^whsec_/);
    await chromium.shot(page, "15-webhook-added");
    await page.getByRole("link", { name: "Go to the webhook" }).click();
    await page.getByRole("button", { name: "Send test ping" }).click();
    await page.getByText("Your receiver answered 200: the ping succeeded.").waitFor();
    await chromium.shot(page, "16-test-ping");
    expect(received).toHaveLength(1);
    expect(JSON.parse(received[0]!)).toMatchObject({ type: "ping" });
    await page.getByRole("link", { name: "Back to the webhook" }).click();
    const row = page.getByRole("row").filter({ hasText: "ping" });
    expect(await row.getByText("succeeded").count()).toBe(1);
    await row.getByText("1 attempt").click();
    await row.getByText("pong from e2e").waitFor();
    await chromium.shot(page, "17-webhook-delivery-log");
    await page.getByText("Delete this webhook…").click();
    await page.getByRole("button", { name: "Delete webhook" }).click();
    await page.getByText("The webhook and its delivery log were deleted.").waitFor();
    await context.close();
  } finally {
    await new Promise((r) => receiver.close(r));
  }
});

it("requests an export, watches it finish without a reload, and downloads the CSV", async () => {
  const { context, page } = await chromium.openContext();
  await signIn(page, server.url, ADMIN);
  await page
    .getByRole("navigation", { name: "Dashboard sections" })
    .getByRole("link", { name: "Exports" })
    .click();
  await page.getByRole("radio", { name: /^Completions/ }).check();
  await chromium.shot(page, "18-exports");
  await page.getByRole("button", { name: "Request export" }).click();
  await page.getByText("Your export is being generated").waitFor();
  // The newest export's row: its status is polled by the page's script until the file is ready.
  const row = page.getByRole("row").nth(1);
  // Still open when the page was rendered, the row is polled by the page's script; a fast export is
  // already complete then. Either way the link appears without a reload.
  const link = row.getByRole("link", { name: "Download CSV" });
  await link.waitFor({ timeout: 60_000 });
  expect(await row.getByText("completed").count()).toBe(1);
  await chromium.shot(page, "19-export-completed");
  const [download] = await Promise.all([page.waitForEvent("download"), link.click()]);
  expect(download.suggestedFilename()).toMatch(
    /^lingua-completions-acme-\d{4}-\d{2}-\d{2}-[0-9A-Z]{8}\.csv$/,
  );
  const stream = await download.createReadStream();
  let csv = "";
  for await (const chunk of stream) csv += chunk;
  expect(csv.split("\r\n")[0]).toContain("user_id");

  // The page's script: the list as the server renders it while the export is still open (status
  // queued, no link, marked for polling), which a fast export outruns; the script finds it finished.
  const href = (await link.getAttribute("href"))!;
  const listUrl = `${server.url}/dashboard/settings/integrations/exports`;
  await page.route(listUrl, async (route) => {
    const response = await route.fetch();
    const body = (await response.text())
      .replace(
        '<tr><th scope="row">',
        `<tr data-export="${href.replace(/\/download$/, "/status")}"><th scope="row">`,
      )
      .replace('data-field="status">completed<', 'data-field="status">queued<')
      .replace(`<a href="${href}">Download CSV</a>`, "");
    await route.fulfill({ response, body });
  });
  await page.goto(listUrl);
  const polled = page.getByRole("row").nth(1);
  expect(await polled.getByRole("link", { name: "Download CSV" }).count()).toBe(0);
  await polled.getByRole("link", { name: "Download CSV" }).waitFor();
  expect(await polled.getByText("completed").count()).toBe(1);
  await page.unroute(listUrl);
  await context.close();
});

it("opens an invitation URL as a page where the invited admin chooses a password", async () => {
  const signedIn = await fetch(`${server.url}/api/auth/sign-in`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ email: ADMIN, password: DEMO_PASSWORD }),
  });
  const { token, user } = (await signedIn.json()) as { token: string; user: { institution_id: string } };
  const email = `e2e.admin.${Date.now()}@acme.lingua.test`;
  const created = await fetch(`${server.url}/api/institutions/${user.institution_id}/members`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
    body: JSON.stringify({ email, name: "E2E Admin", role: "institution_admin" }),
  });
  expect(created.status).toBe(201);
  const { invitation_url } = (await created.json()) as { invitation_url: string };
  expect(new URL(invitation_url).pathname).toBe("/dashboard/accept-invitation");

  const { context, page } = await chromium.openContext();
  await page.goto(invitation_url);
  await chromium.shot(page, "10-accept-invitation");
  await page.getByLabel("Password", { exact: true }).fill("an e2e passphrase 2026");
  await page.getByLabel("Repeat the password").fill("an e2e passphrase 2026");
  await page.getByRole("button", { name: "Set password" }).click();
  await page.waitForURL(`${server.url}/dashboard`);
  expect(await page.getByRole("banner").textContent()).toContain(email);
  await context.close();
});

it("lets platform staff choose an institution", async () => {
  const { context, page } = await chromium.openContext();
  await signIn(page, server.url, STAFF);
  await page.getByRole("link", { name: "Choose an institution" }).first().click();
  await page.waitForURL(/\/dashboard\/institutions$/);
  await chromium.shot(page, "11-institutions");
  await page.getByRole("button", { name: /^Choose Acme/ }).click();
  await page.waitForURL(`${server.url}/dashboard`);
  expect(await page.getByRole("banner").textContent()).toContain("Acme");
  await chromium.shot(page, "12-overview-staff");
  await context.close();
});

it("saw no console error, no CSP violation and no request off the origin", () => {
  expect(chromium.problems).toEqual([]);
  expect(chromium.blocked).toEqual([]);
});
