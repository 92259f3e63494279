/**
 * The browser the end-to-end files drive: Debian's chromium through playwright-core (never a browser
 * that Playwright downloads), pages that report what went wrong inside them (CSP violations, uncaught
 * errors, console errors), contexts whose requests cannot leave the origins a file allows, and the
 * dashboard's sign-in as a user does it.
 */
import { existsSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { DEMO_PASSWORD } from "../../../scripts/demo-data.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

export const CHROMIUM = "/usr/bin/chromium";

export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

/** Throws a clear message when the machine has no Debian chromium. */
export function requireChromium(): void {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);
}

export async function launchChromium(): Promise<Browser> {
  requireChromium();
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

export type PageProblemKind = "CSP" | "page error" | "console";

/**
 * Reports what goes wrong inside `page` from now on: every CSP violation (`directive blocked-uri`,
 * reported from inside the page), every uncaught error, every console error. `where` is the page's
 * URL (for a CSP violation, its path) at the time.
 */
export async function watchPage(
  page: Page,
  report: (kind: PageProblemKind, line: string, where: string) => void,
): Promise<void> {
  await page.exposeFunction("reportCspViolation", (line: string, path: string) => report("CSP", line, path));
  // Browser code, as text: this folder is type-checked for Node, without the DOM's types.
  await page.addInitScript({
    content: `document.addEventListener("securitypolicyviolation", (event) =>
      window.reportCspViolation(event.effectiveDirective + " " + event.blockedURI, location.pathname));`,
  });
  page.on("pageerror", (error) => report("page error", error.message, page.url()));
  page.on("console", (message) => {
    if (message.type() === "error") report("console", message.text(), page.url());
  });
}

/** Lets a context's requests through only when `allow(url)`; the others are aborted before they are sent. */
export async function keepRequestsTo(
  context: BrowserContext,
  allow: (url: URL) => boolean,
  blocked?: string[],
): Promise<void> {
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (allow(new URL(url))) return route.continue();
    blocked?.push(url);
    return route.abort("blockedbyclient");
  });
}

export interface WatchedBrowser {
  browser: Browser;
  /** Every problem of every page opened through `openContext`, as `kind: line`. */
  problems: string[];
  /** Every request that would have gone where the file does not allow (aborted). */
  blocked: string[];
  /** A context that keeps to the allowed URLs, and its page, watched. */
  openContext(options?: { viewport?: { width: number; height: number } }): Promise<{
    context: BrowserContext;
    page: Page;
  }>;
  /** A full-page screenshot of `page` as test-artifacts/<artifacts>/<name>.png. */
  shot(page: Page, name: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * One chromium for a test file. `allow` is asked at each request (so it may read a server URL known
 * only later); the file's screenshots go to test-artifacts/<artifacts>/ (git-ignored).
 */
export async function watchedBrowser(options: {
  artifacts: string;
  allow: (url: URL) => boolean;
  /** Adds the page's URL to console errors (pages that move between origins). */
  consoleUrl?: boolean;
}): Promise<WatchedBrowser> {
  const artifacts = join(ROOT, "test-artifacts", options.artifacts);
  mkdirSync(artifacts, { recursive: true });
  const browser = await launchChromium();
  const problems: string[] = [];
  const blocked: string[] = [];
  return {
    browser,
    problems,
    blocked,
    async openContext({ viewport = { width: 1280, height: 900 } } = {}) {
      const context = await browser.newContext({ viewport });
      await keepRequestsTo(context, options.allow, blocked);
      const page = await context.newPage();
      await watchPage(page, (kind, line, where) =>
        problems.push(
          `${kind}: ${line}${kind === "CSP" || (kind === "console" && options.consoleUrl) ? ` (${where})` : ""}`,
        ),
      );
      return { context, page };
    },
    async shot(page, name) {
      await page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
    },
    close: () => browser.close(),
  };
}

/** Signs in to the dashboard through its form, from the redirect that an unsigned visit gets. */
export async function signIn(page: Page, origin: string, email: string, password = DEMO_PASSWORD) {
  await page.goto(`${origin}/dashboard`);
  await page.waitForURL(/\/dashboard\/sign-in\?next=/);
  await page.getByLabel("E-mail address", { exact: true }).fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForURL(`${origin}/dashboard`);
}
