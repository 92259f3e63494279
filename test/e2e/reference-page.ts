/**
 * The API reference page (/api/docs) in a real browser: Debian's chromium driven by playwright-core
 * (never a browser that Playwright downloads). Every request the page makes is recorded, and any
 * that would leave the page's origin is aborted before it is sent, so nothing reaches the network
 * even if the page misbehaves; CSP violations are recorded from inside the page.
 */
import { existsSync } from "node:fs";
import { chromium } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";

export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

export interface ReferencePageVisit {
  /** Every URL the page requested, in order (aborted ones included). */
  requests: string[];
  /** `directive blocked-uri` of every CSP violation the page reported. */
  cspViolations: string[];
  /** Uncaught errors and console errors of the page. */
  errors: string[];
  /** Whether `text` became visible on the page. */
  rendered: boolean;
}

/** Opens `${origin}/api/docs` and waits (up to `timeoutMs`) for `text` to be visible. */
export async function visitReferencePage(
  origin: string,
  text: string,
  timeoutMs = 30_000,
): Promise<ReferencePageVisit> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  try {
    const context = await browser.newContext();
    const visit: ReferencePageVisit = { requests: [], cspViolations: [], errors: [], rendered: false };
    await context.route("**/*", (route) => {
      const url = route.request().url();
      visit.requests.push(url);
      return new URL(url).origin === origin ? route.continue() : route.abort("blockedbyclient");
    });
    const page = await context.newPage();
    await page.exposeFunction("reportCspViolation", (line: string) => visit.cspViolations.push(line));
    // Browser code, as text: this folder is type-checked for Node, without the DOM's types.
    await page.addInitScript({
      content: `document.addEventListener("securitypolicyviolation", (event) =>
        window.reportCspViolation(event.effectiveDirective + " " + event.blockedURI));`,
    });
    page.on("pageerror", (error) => visit.errors.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") visit.errors.push(message.text());
    });
    await page.goto(`${origin}/api/docs`);
    visit.rendered = await page
      .getByText(text, { exact: true })
      .first()
      .waitFor({ state: "visible", timeout: timeoutMs })
      .then(() => true)
      .catch(() => false);
    // Whatever the page starts after its first render (lazy chunks, fonts) is recorded too.
    await page.waitForLoadState("networkidle", { timeout: 5_000 }).catch(() => undefined);
    return visit;
  } finally {
    await browser.close();
  }
}
