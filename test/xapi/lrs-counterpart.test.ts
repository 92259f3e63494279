// The strict loopback LRS the xAPI tests send to (test/helpers/lrs-server.ts): what it accepts, what
// it refuses as a conformant LRS would, and each failure a test can script, seen from workerd through
// test/helpers/lrs.ts.
import { describe, expect, it } from "vitest";
import { createLrs, LRS_BASIC, type Lrs } from "../helpers/lrs";

const BASIC = `Basic ${btoa(`${LRS_BASIC.username}:${LRS_BASIC.password}`)}`;

function statement(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: crypto.randomUUID(),
    actor: {
      objectType: "Agent",
      name: "Ada",
      account: { homePage: "https://lingua.example", name: "usr_01" },
    },
    verb: { id: "http://adlnet.gov/expapi/verbs/answered", display: { "en-US": "answered" } },
    object: {
      objectType: "Activity",
      id: "https://lingua.example/xapi/activities/training-items/itm_1",
      definition: {
        name: { "en-US": "Item 1" },
        type: "http://adlnet.gov/expapi/activities/cmi.interaction",
        interactionType: "fill-in",
      },
    },
    result: {
      success: true,
      score: { scaled: 0.5, raw: 1, min: 0, max: 2 },
      duration: "PT30S",
      response: "hola",
    },
    context: {
      platform: "Lingua",
      language: "es",
      extensions: { "https://lingua.example/xapi/extensions/cefr-level": "A2" },
    },
    timestamp: "2026-11-20T09:30:00.000Z",
    ...overrides,
  };
}

async function post(lrs: Lrs, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${lrs.endpoint}statements`, {
    method: "POST",
    headers: {
      Authorization: BASIC,
      "X-Experience-API-Version": "1.0.3",
      "Content-Type": "application/json",
      ...headers,
    },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as unknown };
}

function message(body: unknown): string {
  return (body as { message: string }).message;
}

describe("a valid statement", () => {
  it("is stored and answered with its id; GET /statements gives it back", async () => {
    const lrs = await createLrs();
    const s = statement();
    const res = await post(lrs, s);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([s.id]);
    const stored = await lrs.statements();
    expect(stored.map((x) => x.id)).toEqual([s.id]);
    expect(stored[0]?.statement).toEqual(s);
    expect(stored[0]?.version).toBe("1.0.3");
    expect(await lrs.posted()).toEqual({ [s.id as string]: 1 });

    const got = await fetch(`${lrs.endpoint}statements?limit=1`, {
      headers: { Authorization: BASIC, "X-Experience-API-Version": "1.0.3" },
    });
    expect(got.status).toBe(200);
    expect(await got.json()).toEqual({ statements: [s], more: "" });
  });

  it("an array of statements is stored at once, in order", async () => {
    const lrs = await createLrs();
    const batch = [statement(), statement(), statement()];
    const res = await post(lrs, batch, { "X-Experience-API-Version": "2.0.0" });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(batch.map((s) => s.id));
    expect((await lrs.statements()).map((s) => s.id)).toEqual(batch.map((s) => s.id));
  });

  it("every request is recorded with its headers, credentials, version and statement ids", async () => {
    const lrs = await createLrs();
    const s = statement();
    await post(lrs, [s]);
    const [request] = await lrs.requests();
    expect(request).toMatchObject({
      method: "POST",
      path: "/xapi/statements",
      version: "1.0.3",
      auth: { type: "basic", ...LRS_BASIC },
      statement_ids: [s.id],
      status: 200,
    });
    expect(request?.headers.authorization).toBe(BASIC);
  });
});

describe("/about", () => {
  it("answers the versions without credentials or version header", async () => {
    const lrs = await createLrs({ versions: ["2.0.0"] });
    const res = await fetch(`${lrs.endpoint}about`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ version: ["2.0.0"] });
  });
});

describe("refusals of a conformant LRS", () => {
  it("no version header, or one it does not announce: 400", async () => {
    const lrs = await createLrs({ versions: ["1.0.3"] });
    const missing = await fetch(`${lrs.endpoint}statements`, {
      method: "POST",
      headers: { Authorization: BASIC, "Content-Type": "application/json" },
      body: JSON.stringify(statement()),
    });
    expect(missing.status).toBe(400);
    expect(message(await missing.json())).toMatch(/X-Experience-API-Version/);
    const other = await post(lrs, statement(), { "X-Experience-API-Version": "2.0.0" });
    expect(other.status).toBe(400);
    expect(message(other.body)).toMatch(/2\.0\.0 is not supported/);
    expect(await lrs.statements()).toEqual([]);
  });

  it("no credentials, a wrong password, an unknown token: 401", async () => {
    const lrs = await createLrs();
    const none = await post(lrs, statement(), { Authorization: "" });
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Basic/);
    const wrong = await post(lrs, statement(), { Authorization: `Basic ${btoa("lrs-user:nope")}` });
    expect(wrong.status).toBe(401);
    const bearer = await post(lrs, statement(), { Authorization: "Bearer made-up" });
    expect(bearer.status).toBe(401);
    const query = await fetch(`${lrs.endpoint}statements?limit=1`, {
      headers: { "X-Experience-API-Version": "1.0.3" },
    });
    expect(query.status).toBe(401);
    expect(await lrs.statements()).toEqual([]);
  });

  it.each([
    ["an id that is not a UUID", { id: "abc" }, /statement\.id/],
    ["a missing id", { id: undefined }, /statement\.id: missing/],
    ["a relative object IRI", { object: { id: "/activities/1" } }, /statement\.object\.id/],
    [
      "a verb id that is no IRI",
      { verb: { id: "answered", display: { "en-US": "answered" } } },
      /statement\.verb\.id/,
    ],
    ["score.scaled of 1.5", { result: { score: { scaled: 1.5 } } }, /scaled/],
    ["raw above max", { result: { score: { raw: 3, min: 0, max: 2 } } }, /raw/],
    ["a duration that is not ISO 8601", { result: { duration: "30 seconds" } }, /duration/],
    [
      "a language-map key that is no tag",
      { verb: { id: "http://adlnet.gov/expapi/verbs/answered", display: { "english!": "answered" } } },
      /display/,
    ],
    ["stored set by the client", { stored: "2026-11-20T09:30:00Z" }, /stored/],
    ["authority set by the client", { authority: { mbox: "mailto:lrs@example.com" } }, /authority/],
    ["a timestamp without a time zone", { timestamp: "2026-11-20T09:30:00" }, /timestamp/],
    ["an extension key that is no IRI", { context: { extensions: { level: "A2" } } }, /extensions/],
    ["an unknown property", { colour: "red" }, /unknown properties "colour"/],
  ])("%s: 400 for the whole batch, naming the statement", async (_, overrides, pattern) => {
    const lrs = await createLrs();
    const good = statement();
    const bad = statement(overrides);
    const res = await post(lrs, [good, bad]);
    expect(res.status).toBe(400);
    expect(message(res.body)).toMatch(/^Statement 1 /);
    expect(message(res.body)).toMatch(pattern);
    expect(await lrs.statements()).toEqual([]);
  });

  it("an id it already stores: 409 for the whole batch, nothing stored", async () => {
    const lrs = await createLrs();
    const first = statement();
    expect((await post(lrs, first)).status).toBe(200);
    const fresh = statement();
    const again = await post(lrs, [fresh, { ...first }]);
    expect(again.status).toBe(409);
    expect(message(again.body)).toContain(first.id as string);
    expect((await lrs.statements()).map((s) => s.id)).toEqual([first.id]);
    expect(await lrs.posted()).toEqual({ [first.id as string]: 2, [fresh.id as string]: 1 });
  });

  it("the same id twice in one batch: 400", async () => {
    const lrs = await createLrs();
    const s = statement();
    const res = await post(lrs, [s, s]);
    expect(res.status).toBe(400);
    expect(message(res.body)).toContain(s.id as string);
    expect(await lrs.statements()).toEqual([]);
  });
});

describe("scripted failures", () => {
  it("400 for one given statement: a batch containing it fails, that statement alone fails", async () => {
    const bad = statement();
    const others = [statement(), statement()];
    const lrs = await createLrs({ reject: { [bad.id as string]: "object.definition: we dislike this one" } });
    const batch = await post(lrs, [others[0], bad, others[1]]);
    expect(batch.status).toBe(400);
    expect(message(batch.body)).toMatch(/Statement 1 .*we dislike this one/);
    expect((await post(lrs, bad)).status).toBe(400);
    for (const s of others) expect((await post(lrs, s)).status).toBe(200);
    expect((await lrs.statements()).map((s) => s.id)).toEqual(others.map((s) => s.id));
  });

  it("409 for a given id, and for a seeded statement", async () => {
    const conflicting = statement();
    const seeded = statement();
    const lrs = await createLrs({ conflict: [conflicting.id as string], seed: [seeded] });
    expect((await post(lrs, conflicting)).status).toBe(409);
    expect((await post(lrs, seeded)).status).toBe(409);
    expect((await lrs.statements()).map((s) => s.id)).toEqual([seeded.id]);
  });

  it("413 above N statements per request", async () => {
    const lrs = await createLrs({ max_statements_per_request: 2 });
    const three = await post(lrs, [statement(), statement(), statement()]);
    expect(three.status).toBe(413);
    expect(message(three.body)).toMatch(/at most 2/);
    expect((await post(lrs, [statement(), statement()])).status).toBe(200);
  });

  it("429 with Retry-After, then normal", async () => {
    const lrs = await createLrs({ script: [{ status: 429, retry_after: 7 }] });
    const limited = await post(lrs, statement());
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("7");
    expect((await post(lrs, statement())).status).toBe(200);
    expect((await lrs.requests()).map((r) => r.status)).toEqual([429, 200]);
  });

  it("503 n times, then normal; a script can aim at other requests than POST", async () => {
    const lrs = await createLrs({
      script: [
        { status: 503, times: 2, retry_after: 1 },
        { on: "about", status: 500 },
      ],
    });
    expect((await fetch(`${lrs.endpoint}about`)).status).toBe(500);
    expect((await post(lrs, statement())).status).toBe(503);
    expect((await post(lrs, statement())).status).toBe(503);
    expect((await post(lrs, statement())).status).toBe(200);
    expect((await fetch(`${lrs.endpoint}about`)).status).toBe(200);
  });

  it("no answer: the request hangs past the client's time-out", async () => {
    const lrs = await createLrs({ script: [{ hang: true, hang_ms: 2_000 }] });
    const s = statement();
    const started = Date.now();
    await expect(
      fetch(`${lrs.endpoint}statements`, {
        method: "POST",
        headers: {
          Authorization: BASIC,
          "X-Experience-API-Version": "1.0.3",
          "Content-Type": "application/json",
        },
        body: JSON.stringify(s),
        signal: AbortSignal.timeout(300),
      }),
    ).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(2_000);
    const [request] = await lrs.requests();
    expect(request).toMatchObject({ statement_ids: [s.id], status: 0 });
    expect(await lrs.statements()).toEqual([]);
    expect((await post(lrs, s)).status).toBe(200);
  });

  it("reconfiguring keeps what was received when asked to", async () => {
    const lrs = await createLrs();
    await post(lrs, statement());
    await lrs.script([{ status: 503 }]);
    expect(await lrs.statements()).toHaveLength(1);
    expect((await post(lrs, statement())).status).toBe(503);
    await lrs.configure({});
    expect(await lrs.requests()).toEqual([]);
  });
});

describe("OAuth 2 client credentials", () => {
  const oauth2 = { client_id: "lingua", client_secret: "s3cret", expires_in: 1 };

  async function token(lrs: Lrs, init: { basic?: boolean; secret?: string; grant?: string } = {}) {
    const secret = init.secret ?? oauth2.client_secret;
    const form = new URLSearchParams({ grant_type: init.grant ?? "client_credentials" });
    const headers: Record<string, string> = { "Content-Type": "application/x-www-form-urlencoded" };
    if (init.basic) headers.Authorization = `Basic ${btoa(`${oauth2.client_id}:${secret}`)}`;
    else {
      form.set("client_id", oauth2.client_id);
      form.set("client_secret", secret);
    }
    const res = await fetch(lrs.tokenUrl, { method: "POST", headers, body: form });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  it("issues tokens (credentials in Basic or in the form), counts them, accepts them until they expire", async () => {
    const lrs = await createLrs({ oauth2 });
    const inForm = await token(lrs);
    expect(inForm.status).toBe(200);
    expect(inForm.body).toMatchObject({ token_type: "Bearer", expires_in: 1 });
    const inBasic = await token(lrs, { basic: true });
    expect(inBasic.status).toBe(200);
    expect(await lrs.tokensIssued()).toBe(2);

    const bearer = `Bearer ${inForm.body.access_token}`;
    const ok = await post(lrs, statement(), { Authorization: bearer });
    expect(ok.status).toBe(200);
    expect((await lrs.requests()).at(-1)?.auth).toEqual({ type: "bearer", token: inForm.body.access_token });
    // An OAuth-only instance takes no Basic credentials.
    expect((await post(lrs, statement())).status).toBe(401);

    await new Promise((r) => setTimeout(r, 1_100));
    const expired = await post(lrs, statement(), { Authorization: bearer });
    expect(expired.status).toBe(401);
    expect(expired.headers.get("www-authenticate")).toMatch(/^Bearer/);
  });

  it("refuses a wrong secret (401) and another grant (400); expire_tokens revokes what was issued", async () => {
    const lrs = await createLrs({ oauth2: { ...oauth2, expires_in: 3600 } });
    expect((await token(lrs, { secret: "wrong" })).status).toBe(401);
    expect((await token(lrs, { basic: true, secret: "wrong" })).status).toBe(401);
    expect((await token(lrs, { grant: "password" })).body).toEqual({ error: "unsupported_grant_type" });
    expect(await lrs.tokensIssued()).toBe(0);

    const issued = await token(lrs);
    const bearer = `Bearer ${issued.body.access_token}`;
    expect((await post(lrs, statement(), { Authorization: bearer })).status).toBe(200);
    await lrs.configure({ expire_tokens: true, reset: false });
    expect((await post(lrs, statement(), { Authorization: bearer })).status).toBe(401);
  });
});

describe("instances", () => {
  it("are independent: statements, credentials, versions and scripts", async () => {
    const a = await createLrs({ basic: { username: "a", password: "pa" }, versions: ["1.0.3"] });
    const b = await createLrs({ script: [{ status: 503 }] });
    const s = statement();
    expect((await post(a, s, { Authorization: `Basic ${btoa("a:pa")}` })).status).toBe(200);
    expect((await post(b, s)).status).toBe(503);
    expect((await post(b, s)).status).toBe(200);
    expect((await post(a, statement())).status).toBe(401);
    expect(await (await fetch(`${b.endpoint}about`)).json()).toEqual({ version: ["1.0.3", "2.0.0"] });
    expect((await a.statements()).map((x) => x.id)).toEqual([s.id]);
    expect((await b.statements()).map((x) => x.id)).toEqual([s.id]);
  });

  it("an unknown instance answers 404", async () => {
    const lrs = await createLrs();
    const res = await fetch(`${lrs.endpoint.replace(lrs.name, crypto.randomUUID())}about`);
    expect(res.status).toBe(404);
  });
});
