/**
 * Deep linking's two pages in a real browser (Debian's chromium driven by playwright-core): the
 * selection page and the self-submitting response page, exactly as the worker renders them (the
 * page module loads in Node), served with their own headers by a loopback "tool" server whose API
 * answers are stubs, inside a loopback "platform" page on another origin that frames them and
 * receives the form post. It shows what the worker tests cannot: the pages' scripts run under their
 * Content-Security-Policy without a violation, show the LMS's and the catalogue's text as text, send
 * the choice with the launch's session and deliver the JWT to the return URL, and a third origin
 * cannot frame them.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { keepRequestsTo, launchChromium, watchPage } from "./helpers/browser";

const LAUNCH = "lti_01E2EDEEPLINKING0000000000";
const TOKEN = "lng_e2e_session_token";
const JWT = "eyJhbGciOiJSUzI1NiJ9.eyJlMmUiOnRydWV9.c2lnbmF0dXJl";
const NASTY_TITLE = `<img src=x onerror="window.pwned=1">Spanish & "friends"`;

interface Recorded {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
}

interface Pages {
  selectionPage(input: {
    launchId: string;
    returnUrl: string;
    frameOrigins: string[];
    acceptMultiple: boolean;
    acceptLineItem: boolean;
  }): Promise<Response>;
  autoSubmitPage(input: { returnUrl: string; jwt: string; frameOrigins: string[] }): Promise<Response>;
}

let pages: Pages;
const servers: Server[] = [];
const toolRequests: Recorded[] = [];
const platformPosts: Recorded[] = [];
let tool = "";
let platform = "";
let stranger = "";

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

async function send(res: ServerResponse, response: Response) {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(await response.text());
}

function listen(host: string, handler: (req: IncomingMessage, res: ServerResponse) => Promise<unknown>) {
  const server = createServer((req, res) => {
    handler(req, res).catch((error) => res.writeHead(500).end(String(error)));
  });
  servers.push(server);
  return new Promise<string>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve(`http://${host}:${(server.address() as AddressInfo).port}`)),
  );
}

const returnUrl = () => `${platform}/return?course=1&note="<b>`;

beforeAll(async () => {
  // A specifier in a variable: this folder is type-checked with Node's types, the worker's modules
  // with the Workers runtime's, so the checker must not follow the import.
  const pagesModule: string = "../../src/domains/lti/deep-linking/pages";
  pages = (await import(pagesModule)) as Pages;
  // The platform on localhost, the tool on 127.0.0.1 (another site), a stranger on another port.
  platform = await listen("localhost", async (req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (req.method === "POST" && path === "/return") {
      platformPosts.push({
        method: "POST",
        path: req.url ?? "",
        headers: req.headers,
        body: await readBody(req),
      });
      res.writeHead(200, { "Content-Type": "text/html" }).end("<p id=done>Content added</p>");
      return;
    }
    const src =
      path === "/course/auto"
        ? `${tool}/auto`
        : `${tool}/api/lti/deep-linking/${LAUNCH}/select#code=the-code`;
    res
      .writeHead(200, { "Content-Type": "text/html" })
      .end(
        `<!doctype html><title>LMS</title><iframe name="tool" src="${src}" width="800" height="600"></iframe>`,
      );
  });
  tool = await listen("127.0.0.1", async (req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const body = await readBody(req);
    toolRequests.push({
      method: req.method ?? "",
      path: url.pathname + url.search,
      headers: req.headers,
      body,
    });
    const json = (status: number, value: unknown) =>
      res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(value));
    if (url.pathname === `/api/lti/deep-linking/${LAUNCH}/select`)
      return send(
        res,
        await pages.selectionPage({
          launchId: LAUNCH,
          returnUrl: returnUrl(),
          frameOrigins: [platform],
          acceptMultiple: true,
          acceptLineItem: true,
        }),
      );
    if (url.pathname === "/auto")
      return send(
        res,
        await pages.autoSubmitPage({ returnUrl: returnUrl(), jwt: JWT, frameOrigins: [platform] }),
      );
    if (url.pathname === "/api/lti/session")
      return json(200, {
        session: { token: TOKEN, token_type: "Bearer", expires_at: "2030-01-01T00:00:00Z" },
      });
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return json(401, { detail: "no session" });
    if (url.pathname === `/api/lti/deep-linking/${LAUNCH}/items`)
      return json(200, {
        data: [
          {
            id: "crs_e2e",
            title: NASTY_TITLE,
            lessons: [
              { id: "les_e2e_1", title: "Greetings", position: 1 },
              { id: "les_e2e_2", title: "Numbers", position: 2 },
            ],
          },
        ],
        links: { next: null },
      });
    if (url.pathname === `/api/lti/deep-linking/${LAUNCH}/response`)
      return json(200, { return_url: returnUrl(), jwt: JWT });
    json(404, { detail: "not found" });
  });
  // Another origin (another port): a page there that frames the selection page.
  stranger = await listen("127.0.0.1", async (_req, res) => {
    res
      .writeHead(200, { "Content-Type": "text/html" })
      .end(
        `<!doctype html><iframe name="tool" src="${tool}/api/lti/deep-linking/${LAUNCH}/select#code=stolen"></iframe>`,
      );
  });
});

afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});

async function browse(start: string) {
  const browser = await launchChromium();
  const context = await browser.newContext();
  const allowed = new Set([tool, platform, stranger].map((url) => new URL(url).origin));
  await keepRequestsTo(context, (url) => allowed.has(url.origin));
  const page = await context.newPage();
  const csp: string[] = [];
  const errors: string[] = [];
  await watchPage(page, (kind, line) => {
    if (kind === "CSP") csp.push(line);
    else if (kind === "page error") errors.push(line);
  });
  await page.goto(start);
  return { browser, page, csp, errors };
}

it("the selection page lists the items as text, sends the choice with the session and posts the JWT to the platform", async () => {
  const { browser, page, csp, errors } = await browse(`${platform}/course`);
  try {
    const frame = page.frameLocator("iframe[name=tool]");
    await frame.getByText("1. Greetings").waitFor({ timeout: 20_000 });
    // The catalogue's title is text, not markup.
    await expect(frame.getByText(`${NASTY_TITLE} (whole course)`).count()).resolves.toBe(1);
    await expect(frame.locator("img").count()).resolves.toBe(0);
    await frame.getByLabel("2. Numbers").check();
    await frame.getByLabel(`${NASTY_TITLE} (whole course)`).check();
    await frame.locator("#grade").check();
    await frame.locator("#points").fill("20");
    await frame.getByRole("button", { name: "Add to course" }).click();
    await frame.locator("#done").waitFor({ timeout: 20_000 });

    const exchange = toolRequests.find((r) => r.path === "/api/lti/session");
    expect(JSON.parse(exchange!.body)).toEqual({ code: "the-code" });
    const response = toolRequests.find((r) => r.path === `/api/lti/deep-linking/${LAUNCH}/response`)!;
    expect(response.method).toBe("POST");
    expect(response.headers["content-type"]).toMatch(/^application\/x-www-form-urlencoded/);
    expect(response.headers.accept).toBe("application/json");
    expect([...new URLSearchParams(response.body)]).toEqual([
      ["course_id", "crs_e2e"],
      ["lesson_id", "les_e2e_2"],
      ["score_maximum", "20"],
    ]);
    const [posted] = platformPosts;
    expect(posted!.path).toBe(new URL(returnUrl()).pathname + new URL(returnUrl()).search);
    expect(Object.fromEntries(new URLSearchParams(posted!.body))).toEqual({ JWT });
    expect(csp).toEqual([]);
    expect(errors).toEqual([]);
  } finally {
    await browser.close();
  }
});

it("the response page posts the JWT to the return URL by itself", async () => {
  platformPosts.length = 0;
  const { browser, page, csp, errors } = await browse(`${platform}/course/auto`);
  try {
    await page.frameLocator("iframe[name=tool]").locator("#done").waitFor({ timeout: 20_000 });
    expect(platformPosts).toHaveLength(1);
    expect(Object.fromEntries(new URLSearchParams(platformPosts[0]!.body))).toEqual({ JWT });
    expect(csp).toEqual([]);
    expect(errors).toEqual([]);
  } finally {
    await browser.close();
  }
});

it("another site cannot frame the selection page: its script never runs there", async () => {
  const { browser, page, csp } = await browse(stranger);
  try {
    await page.waitForTimeout(2_000);
    expect(csp).toEqual([]);
    const framed = page.frames().find((f) => f !== page.mainFrame());
    const text = await framed!.evaluate("document.body ? document.body.innerText : ''").catch(() => "");
    expect(text).not.toContain("Choose Lingua content");
    const exchanges = toolRequests.filter((r) => r.path === "/api/lti/session" && r.body.includes("stolen"));
    expect(exchanges).toEqual([]);
  } finally {
    await browser.close();
  }
});
