/**
 * The API reference page (/api/docs) in a real browser: Debian's chromium driven by playwright-core
 * (never a browser that Playwright downloads). Every request the page makes is recorded, and any
 * that would leave the page's origin is aborted before it is sent, so nothing reaches the network
 * even if the page misbehaves; CSP violations are recorded from inside the page.
 */
import { keepRequestsTo, launchChromium, watchPage } from "./helpers/browser";

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
  const browser = await launchChromium();
  try {
    const context = await browser.newContext();
    const visit: ReferencePageVisit = { requests: [], cspViolations: [], errors: [], rendered: false };
    await keepRequestsTo(context, (url) => {
      visit.requests.push(url.href);
      return url.origin === origin;
    });
    const page = await context.newPage();
    await watchPage(page, (kind, line) => (kind === "CSP" ? visit.cspViolations : visit.errors).push(line));
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
