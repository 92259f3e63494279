/**
 * LTI launches in a browser that blocks third-party cookies, for real: Debian's chromium (driven by
 * playwright-core) opens a loopback LMS page (http://127.0.0.1:<port>) that frames the tool, served by
 * wrangler's dev server on another site (http://localhost:<port>). With the LMS answering
 * `lti.put_data` / `lti.get_data` (1EdTech LTI Client Side postMessage), the tool's login and callback
 * pages keep the state and nonce in the LMS's frame and the launch completes inside the iframe;
 * without it, the launch is refused (the state cookie never comes back), and the launch log says why.
 */
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unstable_startWorker } from "wrangler";
import { writeDatabaseIndexWithWrangler } from "../../scripts/database-index.mjs";
import { DEMO_PASSWORD, demoSeedSql } from "../../scripts/demo-data.mjs";
import { CHROMIUM, CHROMIUM_ARGS, requireChromium, watchPage } from "./helpers/browser";
import { type BrowserPlatform, startBrowserPlatform } from "./helpers/lti-browser-platform";
import { freePort } from "./helpers/shared-dev-server";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const WRANGLER = join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
const OWNER_EMAIL = "owner@acme.lingua.test";

function wrangler(args: string[]) {
  const result = spawnSync(process.execPath, [WRANGLER, ...args], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, CI: "true", NO_COLOR: "1", WRANGLER_SEND_METRICS: "false" },
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) throw new Error(`wrangler ${args.join(" ")}:\n${result.stdout}\n${result.stderr}`);
}

let persistTo = "";
let worker: Awaited<ReturnType<typeof unstable_startWorker>> | undefined;
let platform: BrowserPlatform | undefined;
let browser: BrowserContext | undefined;
let profile = "";
/** The tool as the browser reaches it: another site than the LMS's 127.0.0.1. */
let tool = "";
let token = "";
let consumer: { id: string; tool: { login_url: string; launch_url: string; redirect_uris: string[] } };

async function api(path: string, init: RequestInit & { body?: string } = {}) {
  // On the tool's host, as the browser names it: the worker builds the registration's URLs from it.
  const res = await fetch(`${tool}${path}`, {
    ...init,
    headers: {
      "Content-Type": "application/json",
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
      ...(init.headers as Record<string, string>),
    },
    // A hang guard, generous: the first request (the sign-in) meets a cold worker, on a machine that
    // also sets up the run's shared dev server; it took over 15 s under load.
    signal: AbortSignal.timeout(60_000),
  });
  return { res, body: (await res.json()) as any };
}

beforeAll(async () => {
  requireChromium();
  persistTo = await mkdtemp(join(tmpdir(), "lingua-e2e-lti-"));
  // Its index first, as every runner writes it: the numbers' migration needs it (scripts/database-index.mjs).
  writeDatabaseIndexWithWrangler("DB", ["--local", "--persist-to", persistTo], { cwd: ROOT });
  wrangler(["d1", "migrations", "apply", "DB", "--local", "--persist-to", persistTo]);
  const seed = join(persistTo, "seed.sql");
  await writeFile(seed, demoSeedSql());
  wrangler(["d1", "execute", "DB", "--local", `--file=${seed}`, "--persist-to", persistTo]);

  const port = await freePort();
  worker = await unstable_startWorker({
    config: join(ROOT, "wrangler.toml"),
    envFiles: [],
    bindings: {
      ENCRYPTION_KEY: { type: "plain_text", value: "ZTJlLWx0aS1zdG9yYWdlLWtleS0zMi1ieXRlcy0hISE=" },
      ALLOW_LOOPBACK_TARGETS: { type: "plain_text", value: "true" },
      OUTBOUND_DOH_URL: { type: "plain_text", value: "off" },
    },
    dev: { server: { hostname: "127.0.0.1", port }, inspector: false, persist: persistTo },
  });
  await worker.ready;
  tool = `http://localhost:${port}`;

  platform = await startBrowserPlatform();
  const signIn = await api("/api/auth/sign-in", {
    method: "POST",
    body: JSON.stringify({ email: OWNER_EMAIL, password: DEMO_PASSWORD }),
  });
  expect(signIn.res.status).toBe(200);
  token = signIn.body.token;
  const registered = await api("/api/integrations/lti-consumers", {
    method: "POST",
    body: JSON.stringify({
      name: "Loopback LMS",
      issuer: platform.url,
      client_id: platform.clientId,
      deployment_ids: [platform.deploymentId],
      auth_login_url: `${platform.url}/authorize`,
      auth_token_url: `${platform.url}/token`,
      jwks_url: `${platform.url}/jwks`,
    }),
  });
  expect(registered.res.status, JSON.stringify(registered.body)).toBe(201);
  consumer = registered.body;
  expect(consumer.tool.login_url.startsWith(tool)).toBe(true);
  platform.setTool({ origin: tool, redirectUri: consumer.tool.redirect_uris[0]! });
  // A profile that blocks the tool's cookies inside the LMS's pages, partitioned ones included: what
  // Safari does for every third party. (Chromium's own "block third-party cookies", and the
  // third-party-cookie phase-out flag, still keep a `Partitioned` cookie, which the tool sets.)
  profile = await mkdtemp(join(tmpdir(), "lingua-e2e-chromium-"));
  await mkdir(join(profile, "Default"));
  const blocked = { setting: 2 };
  await writeFile(
    join(profile, "Default", "Preferences"),
    JSON.stringify({
      profile: {
        cookie_controls_mode: 1,
        content_settings: { exceptions: { cookies: { "http://localhost:*,http://127.0.0.1:*": blocked } } },
      },
    }),
  );
  // The tool's frame in the LMS page's process: the launch takes it from the tool (localhost) to the
  // platform (127.0.0.1, the LMS's own site) and back, and with site isolation each of those hops
  // moves it to another renderer process, which Playwright at times fails to follow (the launch
  // completes, the frame it holds stays at /authorize). Cookies are third-party either way.
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: [
      ...CHROMIUM_ARGS,
      "--disable-site-isolation-trials",
      "--disable-features=IsolateOrigins,site-per-process",
    ],
  });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await worker?.dispose();
  await platform?.close();
  for (const dir of [persistTo, profile])
    if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
});

/**
 * Opens the LMS page, which starts a launch in the tool's iframe, and waits until the frame shows
 * `waitFor` (or 60 s pass): what it then shows, and where it is. The frame is reached through the
 * LMS page's <iframe> at each step rather than held, since it navigates several times on the way.
 */
async function launchInLms(options: { storageTarget?: string; answerStorage: boolean; waitFor: RegExp }) {
  const page: Page = await browser!.newPage();
  const errors: string[] = [];
  const cookiesSent: string[] = [];
  const cspViolations: string[] = [];
  await watchPage(page, (kind, line, where) => {
    if (kind === "CSP") cspViolations.push(`${where} ${line}`);
    else if (kind === "page error") errors.push(line);
  });
  page.on("request", async (request) => {
    if (!request.url().startsWith(`${tool}/api/lti/callback`)) return;
    const cookie = (await request.allHeaders()).cookie;
    if (cookie) cookiesSent.push(cookie);
  });
  const query = new URLSearchParams({
    login: consumer.tool.login_url,
    target: consumer.tool.launch_url,
    answer_storage: options.answerStorage ? "1" : "0",
  });
  if (options.storageTarget) query.set("storage_target", options.storageTarget);
  await page.goto(`${platform!.url}/lms?${query}`);
  const body = page.frameLocator("iframe#tool").locator("body");
  // What the user would see: the text in the frame. On a time-out, the assertions below say where it stopped.
  await body
    .getByText(options.waitFor)
    .first()
    .waitFor({ state: "visible", timeout: 60_000 })
    .catch(() => undefined);
  const text = (await body.textContent({ timeout: 5_000 }).catch(() => "")) ?? "";
  const url = await body
    .evaluate((element: any) => String(element.ownerDocument.location.href), undefined, { timeout: 5_000 })
    .catch(() => "");
  await page.close();
  return { text, url, errors, cookiesSent, cspViolations };
}

async function lastLaunch() {
  const { body } = await api(`/api/integrations/lti-launches?consumer_id=${consumer.id}&per_page=1`);
  return body.data[0];
}

describe("a launch in an iframe of another site, third-party cookies blocked", () => {
  it("completes inside the frame through the platform's storage (lti.put_data, then lti.get_data)", async () => {
    const before = platform!.messages.length;
    const launched = await launchInLms({
      storageTarget: "_parent",
      answerStorage: true,
      waitFor: /Signed in as Ada Lovelace/,
    });
    expect(launched.text, `frame at ${launched.url}`).toContain("Signed in as Ada Lovelace");
    expect(launched.url.startsWith(`${tool}/api/lti/app`)).toBe(true);
    expect(launched.errors).toEqual([]);
    // The tool's pages ran their scripts under their strict CSP (hash, nonce) without a violation.
    expect(launched.cspViolations).toEqual([]);
    // The browser sent no cookie back to the tool: the storage bound the launch.
    expect(launched.cookiesSent).toEqual([]);
    const messages = platform!.messages.slice(before);
    expect(messages.map((m) => m.split(" ")[0])).toEqual([
      "lti.put_data",
      "lti.put_data",
      "lti.get_data",
      "lti.get_data",
    ]);
    expect(messages[0]).toMatch(/^lti\.put_data lti_state_/);
    expect(messages[1]).toMatch(/^lti\.put_data lti_nonce_/);
    expect(await lastLaunch()).toMatchObject({ status: "succeeded", consumer_id: consumer.id });
  });

  it("is refused when the platform does not answer the storage messages", async () => {
    const launched = await launchInLms({
      storageTarget: "_parent",
      answerStorage: false,
      waitFor: /could not open this activity/,
    });
    expect(launched.text).toContain("platform_storage_failed");
    expect(await lastLaunch()).toMatchObject({ status: "failed", failure_reason: "platform_storage_failed" });
  });

  it("is refused when the login offers no platform storage: the state cookie does not come back", async () => {
    const launched = await launchInLms({ answerStorage: false, waitFor: /could not open this activity/ });
    expect(launched.text).toContain("browser_binding_missing");
    expect(launched.cookiesSent).toEqual([]);
    expect(await lastLaunch()).toMatchObject({ status: "failed", failure_reason: "browser_binding_missing" });
  });
});
