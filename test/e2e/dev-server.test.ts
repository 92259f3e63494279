/**
 * Smoke test of the one-command local setup (`npm run dev` = scripts/dev.mjs), as a developer meets
 * it: a fresh database directory, setup run twice, then `wrangler dev` on a free port and real HTTP
 * requests with a demo account. A broken migration, a non-idempotent seed, a worker that does not
 * start or a broken sign-in fails this file, and with it CI.
 *
 * The steps run once per end-to-end run, in the shared dev server's global setup
 * (test/e2e/helpers/shared-dev-server.ts), in the background while the other files run; this file
 * checks what each step did and printed, then talks to the server (which test/e2e/xapi.test.ts uses
 * too). Nothing here touches the developer's own database: everything lives in a temporary
 * --persist-to directory that is removed afterwards. (scripts/dev.mjs still writes .dev.vars in the
 * repository root when it is missing, as `npm run dev` always does.)
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createServer as createHttpServer, type IncomingMessage } from "node:http";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseDevVars } from "../../scripts/dev-vars.mjs";
import { conformingFetch, OpenApiConformance } from "../helpers/openapi-conformance";
import { type RunResult, type SharedDevServer, sharedDevServer } from "./helpers/shared-dev-server";
import { builtDocument } from "./openapi-built";
import { visitReferencePage } from "./reference-page";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

const OWNER_EMAIL = "owner@acme.lingua.test";
const LEARNER_EMAIL = "learner@acme.lingua.test";
const DEMO_PASSWORD = "lingua-demo-2026";

const REQUEST_TIMEOUT_MS = 15_000;
/** Kept on failure: the end of the setup and server output. */
const MAX_LOG_CHARS = 40_000;

/** The demo data counted with `wrangler d1 execute --json` after a setup run, as a developer would. */
function countedRows<T>(result: RunResult | undefined): T[] {
  expect(result, "the demo data was not counted (the setup run failed)").toBeDefined();
  expect(result!.code, `wrangler d1 execute failed:\n${result!.stdout}\n${result!.stderr}`).toBe(0);
  let parsed: Array<{ results: T[]; success: boolean }>;
  try {
    parsed = JSON.parse(result!.stdout);
  } catch {
    throw new Error(`wrangler d1 execute --json printed something that is not JSON:\n${result!.stdout}`);
  }
  expect(parsed[0]?.success).toBe(true);
  return parsed[0]!.results;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let shared: SharedDevServer;
let serverReady = false;
let baseUrl = "";

let served: Promise<OpenApiConformance> | undefined;

/** The dev server's own OpenAPI document, read once, which every response below is held to. */
function servedDocument(): Promise<OpenApiConformance> {
  served ??= fetch(`${baseUrl}/api/openapi.json`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
    .then((res) => res.json())
    .then((document) => new OpenApiConformance(document));
  return served;
}

/** A request to the dev server; its response must conform to the served document (as in the workerd suite). */
async function request(path: string, init: RequestInit = {}) {
  const res = await conformingFetch(
    new Request(baseUrl + path, init),
    (r) => fetch(r, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }),
    servedDocument,
  );
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { res, text, body };
}

function signIn(email: string, password: string) {
  return request("/api/auth/sign-in", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ email, password }),
  });
}

/** For assertion messages: status, type and body (an HTML error page only by its title; the server log has the rest). */
function describeResponse(r: { res: Response; text: string }) {
  const type = r.res.headers.get("content-type") ?? "(no content-type)";
  const body = type.includes("html")
    ? `HTML page "${/<title>([^<]*)<\/title>/i.exec(r.text)?.[1] ?? "?"}"; see the dev server output`
    : r.text.slice(0, 1000);
  return `${r.res.status} ${type}: ${body}`;
}

describe("npm run dev on a fresh machine", () => {
  let session: { token: string; token_id: string } | undefined;

  beforeAll(async () => {
    shared = await sharedDevServer();
    baseUrl = shared.url;
  }, 660_000);

  // On a failure, print what the setup and the server said that no earlier failure printed yet.
  let printed = 0;
  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => {
      const output = shared?.output() ?? "";
      const fresh = output.slice(printed);
      printed = output.length;
      if (!fresh) return;
      console.error(
        `Output of the setup and the dev server (at most the last ${MAX_LOG_CHARS} characters):\n${fresh.slice(-MAX_LOG_CHARS)}`,
      );
    });
  });

  it("sets up twice in a row without failing or duplicating the demo data", async () => {
    const counts: Record<string, number>[] = [];
    for (const attempt of ["first", "second"]) {
      const run = shared.state.setupRuns.find((r) => r.attempt === attempt);
      expect(run, `the ${attempt} setup run did not happen (${shared.state.error})`).toBeDefined();
      const result = run!.setup;
      expect(result.code, `the ${attempt} setup run failed:\n${result.stdout}\n${result.stderr}`).toBe(0);
      const [row] = countedRows<Record<string, number>>(run!.count);
      counts.push(row!);
    }
    // In DB: 6 demo accounts + 3 demo members (scripts/demo-data.mjs) + 240 generated learners, less
    // Globex's 2 accounts and 60 learners (Globex lives in DB_1), 2 institutions, 12 courses, weeks of activity.
    expect(counts[0]).toMatchObject({ users: 187, institutions: 2, courses: 12 });
    expect(counts[0]!.items).toBeGreaterThan(15_000);
    expect(counts[0]!.attempts).toBeGreaterThan(40_000);
    expect(counts[0]!.events).toBeGreaterThan(1_000);
    expect(counts[0]!.demo_learner_xp).toBeGreaterThan(0);
    expect(counts[1]).toEqual(counts[0]);
    // wrangler.toml's resolver is a public one: development sets its own, off or a loopback stub.
    const devVars = parseDevVars(await readFile(join(ROOT, ".dev.vars"), "utf8"));
    expect(devVars.OUTBOUND_DOH_URL).toMatch(/^(off|http:\/\/(127\.\d+\.\d+\.\d+|localhost|\[::1\])[:/].*)$/);
  });

  it("starts wrangler dev and answers GET /healthz", async () => {
    expect(
      shared.state.phase,
      `node scripts/dev.mjs did not start the server on ${baseUrl}: ${shared.state.error}`,
    ).toBe("ready");
    expect(JSON.parse(shared.state.healthz!)).toEqual({ status: "ok" });
    // And it still does, now that the files before this one have run.
    const res = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
    serverReady = true;
  });

  it("signs the demo owner in and hands out a lng_ session token", async () => {
    expect(serverReady, "the dev server did not start (see the first failure)").toBe(true);
    const r = await signIn(OWNER_EMAIL, DEMO_PASSWORD);
    expect(r.res.status, describeResponse(r)).toBe(200);
    expect(r.res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(r.body.token).toMatch(/^lng_[A-Za-z0-9_-]{43}$/);
    expect(r.body.token_type).toBe("Bearer");
    expect(r.body.user).toMatchObject({ email: OWNER_EMAIL, role: "institution_admin" });
    session = { token: r.body.token, token_id: r.body.token_id };
  });

  it("GET /api/auth/me shows the owner of Acme on the pro plan with its rate limit", async () => {
    expect(session, "the demo owner could not sign in (see the earlier failure)").toBeDefined();
    const r = await request("/api/auth/me", { headers: { Authorization: `Bearer ${session!.token}` } });
    expect(r.res.status, describeResponse(r)).toBe(200);
    expect(r.body.user).toMatchObject({ email: OWNER_EMAIL, role: "institution_admin" });
    expect(r.body.institution).toMatchObject({ slug: "acme", plan: "pro" });
    expect(r.body.plan).toBe("pro");
    expect(r.body.rate_limit.limit).toBe(1000);
    expect(r.body.token).toMatchObject({ id: session!.token_id, kind: "session" });
    expect(r.res.headers.get("X-RateLimit-Limit")).toBe("1000");
  });

  it("GET /api/integrations/tokens lists the session token in the page envelope", async () => {
    expect(session, "the demo owner could not sign in (see the earlier failure)").toBeDefined();
    const r = await request("/api/integrations/tokens", {
      headers: { Authorization: `Bearer ${session!.token}` },
    });
    expect(r.res.status, describeResponse(r)).toBe(200);
    expect(r.body).toMatchObject({
      data: expect.any(Array),
      links: expect.any(Object),
      meta: expect.any(Object),
    });
    expect(r.body.meta.total).toBeGreaterThanOrEqual(1);
    const listed = r.body.data.find((t: { id: string }) => t.id === session!.token_id);
    expect(listed, `token ${session!.token_id} is not listed:\n${r.text}`).toMatchObject({
      kind: "session",
      user_id: "usr_demo_acme_owner",
    });
    expect(session!.token.startsWith(listed.prefix)).toBe(true);
    // The list shows a prefix to recognise a token, never the token itself.
    expect(r.text).not.toContain(session!.token);
  });

  it("answers a wrong password with 401 problem+json", async () => {
    expect(serverReady, "the dev server did not start (see the first failure)").toBe(true);
    const r = await signIn(OWNER_EMAIL, "not-the-demo-password");
    expect(r.res.status, describeResponse(r)).toBe(401);
    expect(r.res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(r.body).toMatchObject({ status: 401, code: "invalid_credentials" });
    expect(r.body.token).toBeUndefined();
  });

  it("serves the OpenAPI 3.1 document", async () => {
    expect(serverReady, "the dev server did not start (see the first failure)").toBe(true);
    const r = await request("/api/openapi.json");
    expect(r.res.status, describeResponse(r)).toBe(200);
    expect(r.res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(r.body.openapi).toMatch(/^3\.1/);
    expect(r.body.info?.title).toBe("Lingua API");
    expect(r.body.paths).toHaveProperty("/api/auth/sign-in");
  });

  it("renders the API reference offline in chromium: the operations, and no request beyond this origin", async () => {
    expect(serverReady, "the dev server did not start (see the first failure)").toBe(true);
    // The served document is the one test/e2e/openapi-document.test.ts validates, built in Node.
    const served = await request("/api/openapi.json");
    expect(served.body).toEqual(JSON.parse(JSON.stringify(await builtDocument())));

    // An operation's summary (POST /api/auth/sign-in), in the first screen of the reference.
    const summary = "Sign in with e-mail and password";
    const visit = await visitReferencePage(baseUrl, summary);
    expect(visit.rendered, `no "${summary}" on the page; errors: ${visit.errors.join("\n")}`).toBe(true);
    expect(visit.requests).toEqual(
      expect.arrayContaining([
        `${baseUrl}/api/docs`,
        `${baseUrl}/api/docs/scalar-api-reference.js`,
        `${baseUrl}/api/openapi.json`,
      ]),
    );
    expect(visit.requests.filter((url) => new URL(url).origin !== baseUrl)).toEqual([]);
    // The only thing the CSP refuses is zod's feature check for eval (it falls back to no JIT).
    expect(visit.cspViolations.filter((v) => v !== "script-src eval")).toEqual([]);
    expect(visit.errors).toEqual([]);
  });

  it("delivers a signed lesson.completed to a receiver on loopback when the demo learner completes a lesson", async () => {
    expect(session, "the demo owner could not sign in (see the earlier failure)").toBeDefined();
    const received: { headers: IncomingMessage["headers"]; body: Buffer }[] = [];
    const receiver = createHttpServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      received.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(204).end();
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()));
    try {
      const port = (receiver.address() as { port: number }).port;
      const owner = { Authorization: `Bearer ${session!.token}`, "Content-Type": "application/json" };
      const hook = await request("/api/integrations/webhooks", {
        method: "POST",
        headers: owner,
        body: JSON.stringify({ url: `http://127.0.0.1:${port}/lingua`, events: ["lesson.completed"] }),
      });
      expect(hook.res.status, describeResponse(hook)).toBe(201);

      // A lesson the demo learner has not completed yet, and every item of it.
      const learner = await signIn(LEARNER_EMAIL, DEMO_PASSWORD);
      expect(learner.res.status, describeResponse(learner)).toBe(200);
      const auth = { Authorization: `Bearer ${learner.body.token}`, "Content-Type": "application/json" };
      const courses = await request("/api/courses?per_page=100", { headers: auth });
      let target: { lesson: string; items: string[] } | undefined;
      for (const course of courses.body.data) {
        const progress = await request(`/api/courses/${course.id}/lesson-progress?per_page=100`, {
          headers: auth,
        });
        const open = progress.body.data.find((l: { status: string }) => l.status !== "completed");
        if (!open) continue;
        const trainings = await request(`/api/trainings?lesson=${open.lesson_id}&per_page=100`, {
          headers: auth,
        });
        const items: string[] = [];
        for (const training of trainings.body.data) {
          const page = await request(`/api/trainingItems?training=${training.id}&per_page=100`, {
            headers: auth,
          });
          items.push(...page.body.data.map((i: { id: string }) => i.id));
        }
        target = { lesson: open.lesson_id, items };
        break;
      }
      expect(target, "the demo learner has completed every lesson").toBeDefined();
      const occurredAt = new Date(Date.now() - 60_000).toISOString();
      for (let i = 0; i < target!.items.length; i += 100) {
        const attempts = target!.items.slice(i, i + 100).map((id) => ({
          id: crypto.randomUUID(),
          training_item_id: id,
          score: 1,
          correct: true,
          duration_seconds: 15,
          occurred_at: occurredAt,
        }));
        const r = await request("/api/progress/attempts", {
          method: "POST",
          headers: auth,
          body: JSON.stringify({ attempts }),
        });
        expect(r.res.status, describeResponse(r)).toBe(200);
      }

      const deadline = Date.now() + 30_000;
      while (received.length === 0 && Date.now() < deadline) await sleep(100);
      expect(received.length, "no delivery reached the receiver within 30 s").toBeGreaterThanOrEqual(1);
      const [delivery] = received;
      const body = JSON.parse(delivery!.body.toString("utf8"));
      expect(body).toMatchObject({
        type: "lesson.completed",
        data: { lesson_id: target!.lesson, user_id: "usr_demo_acme_learner" },
      });
      expect(delivery!.headers["x-webhook-event"]).toBe("lesson.completed");
      expect(delivery!.headers["x-webhook-id"]).toBe(hook.body.id);
      // Verified as a receiver would: node:crypto over the raw bytes, compared in constant time.
      const expected = createHmac("sha256", Buffer.from(hook.body.secret, "utf8"))
        .update(delivery!.body)
        .digest();
      const sent = Buffer.from(String(delivery!.headers["x-signature-256"]), "hex");
      expect(sent.length === expected.length && timingSafeEqual(sent, expected)).toBe(true);
      const standardKey = Buffer.from(hook.body.secret.slice("whsec_".length), "base64");
      const signed = `${delivery!.headers["webhook-id"]}.${delivery!.headers["webhook-timestamp"]}.${delivery!.body.toString("utf8")}`;
      expect(delivery!.headers["webhook-signature"]).toBe(
        `v1,${createHmac("sha256", standardKey).update(signed).digest("base64")}`,
      );
    } finally {
      await new Promise((r) => receiver.close(() => r(undefined)));
    }
  });
});
