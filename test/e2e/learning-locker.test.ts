/**
 * A real LRS runs here: Learning Locker's `xapi-statements` (test/e2e/helpers/learning-locker.ts), in
 * memory, on loopback. These tests prove it starts under this Node and that it is the strict
 * counterpart the xAPI forwarding tests need: what a conformant LRS accepts it stores, and a score
 * out of range, a bad IRI, a missing version header, wrong credentials and a conflicting id are each
 * refused. Then the same statements go to the loopback LRS the workerd tests use
 * (test/helpers/lrs-server.ts, started here in Node): it must be no laxer than Learning Locker.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLrs } from "../helpers/lrs";
import { startLrs } from "../helpers/lrs-server";
import { type LearningLocker, startLearningLocker } from "./helpers/learning-locker";

let lrs: LearningLocker;
/** The loopback LRS of the workerd tests (test/helpers/lrs-server.ts), started here in Node. */
let loopback: Awaited<ReturnType<typeof startLrs>>;

beforeAll(async () => {
  lrs = await startLearningLocker();
  loopback = await startLrs();
});

afterAll(async () => {
  await lrs?.close();
  await loopback?.close();
});

function statement(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: randomUUID(),
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
      contextActivities: {
        parent: [{ objectType: "Activity", id: "https://lingua.example/xapi/activities/lessons/les_1" }],
        grouping: [{ objectType: "Activity", id: "https://lingua.example/xapi/activities/courses/crs_1" }],
      },
      extensions: { "https://lingua.example/xapi/extensions/cefr-level": "A2" },
    },
    timestamp: "2026-11-20T09:30:00.000Z",
    ...overrides,
  };
}

async function post(body: unknown, headers: Record<string, string | undefined> = {}) {
  const merged: Record<string, string | undefined> = {
    Authorization: lrs.authorization,
    "X-Experience-API-Version": "1.0.3",
    "Content-Type": "application/json",
    ...headers,
  };
  const res = await fetch(`${lrs.endpoint}statements`, {
    method: "POST",
    headers: Object.fromEntries(
      Object.entries(merged).filter((e): e is [string, string] => e[1] !== undefined),
    ),
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, context: `${res.status} ${text} ${lrs.errors.at(-1) ?? ""}` };
}

async function get(id: string) {
  const res = await fetch(`${lrs.endpoint}statements?statementId=${id}`, {
    headers: { Authorization: lrs.authorization, "X-Experience-API-Version": "1.0.3" },
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("Learning Locker's LRS on loopback", () => {
  it("announces its version on /about", async () => {
    const res = await fetch(`${lrs.endpoint}about`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { version: string[] }).version).toContain("1.0.3");
  });

  it("stores a valid statement (200 with its id) and gives it back", async () => {
    const s = statement();
    const res = await post([s]);
    expect(res.status, res.context).toBe(200);
    expect(JSON.parse(res.text)).toEqual([s.id]);
    const back = await get(s.id as string);
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({ id: s.id, verb: s.verb, object: s.object, result: s.result });
    // The LRS sets these, never the client.
    expect(back.body.stored).toEqual(expect.any(String));
    expect(back.body.authority).toBeDefined();
  });

  it.each([
    ["a score.scaled of 1.5", { result: { score: { scaled: 1.5 } } }, "result.score.scaled"],
    ["a bad IRI", { object: { objectType: "Activity", id: "not an iri" } }, "object.id"],
    ["a duration that is not ISO 8601", { result: { duration: "30 seconds" } }, "result.duration"],
    [
      "a language-map key that is no tag",
      { verb: { id: "http://adlnet.gov/expapi/verbs/answered", display: { "english!": "x" } } },
      "verb.display",
    ],
    ["an id that is not a UUID", { id: "abc" }, "id"],
  ])("refuses %s with 400, and stores nothing of the batch", async (_, overrides, path) => {
    const good = statement();
    const res = await post([good, statement(overrides)]);
    expect(res.status, res.context).toBe(400);
    // Its answer names the statement and the property, as the message a forwarding log would keep.
    expect(res.text).toContain(`statements.1.${path}`);
    expect((await get(good.id as string)).status).toBe(404);
  });

  it("refuses a missing version header with 400", async () => {
    const s = statement();
    const res = await post([s], { "X-Experience-API-Version": undefined });
    expect(res.status, res.context).toBe(400);
    expect(res.text).toMatch(/X-Experience-API-Version/);
    expect((await get(s.id as string)).status).toBe(404);
  });

  it("speaks xAPI 1.0.x only: a 2.0.0 version header is 400 (end-to-end tests register it as 1.0.3)", async () => {
    const res = await post([statement()], { "X-Experience-API-Version": "2.0.0" });
    expect(res.status, res.context).toBe(400);
    expect(res.text).toMatch(/X-Experience-API-Version/);
  });

  it("refuses wrong credentials with 401", async () => {
    const s = statement();
    const wrong = `Basic ${Buffer.from(`${lrs.username}:nope`).toString("base64")}`;
    expect((await post([s], { Authorization: wrong })).status).toBe(401);
    expect((await post([s], { Authorization: undefined })).status).toBe(401);
  });

  it("answers 409 for an id it stores with a different statement, and keeps the first", async () => {
    const first = statement();
    expect((await post([first])).status).toBe(200);
    const conflicting = statement({ id: first.id, result: { success: false } });
    const res = await post([conflicting]);
    expect(res.status, res.context).toBe(409);
    expect(res.text).toContain(`${first.id} is conflicting`);
    const back = await get(first.id as string);
    expect(back.status).toBe(200);
    expect(back.body.result).toEqual(first.result);
  });

  it("takes the very same statement again without storing it twice", async () => {
    const s = statement();
    expect((await post([s])).status).toBe(200);
    const again = await post([s]);
    expect(again.status, again.context).toBeLessThan(300);
    const res = await fetch(
      `${lrs.endpoint}statements?verb=${encodeURIComponent("http://adlnet.gov/expapi/verbs/answered")}&limit=0`,
      {
        headers: { Authorization: lrs.authorization, "X-Experience-API-Version": "1.0.3" },
      },
    );
    const { statements } = (await res.json()) as { statements: { id: string }[] };
    expect(statements.filter((x) => x.id === s.id)).toHaveLength(1);
  });
});

describe("the loopback LRS the workerd tests use", () => {
  // Each variant of a valid statement, with Learning Locker's verdict and the loopback LRS's: the
  // loopback one refuses everything Learning Locker refuses, and a little more on purpose: a
  // statement without an id (the spec lets the LRS assign one; Lingua must always send its derived
  // id), and `stored` or `authority` from the client (the spec has the LRS overwrite them; Lingua
  // must never send them).
  const VALID = 200;
  const REFUSED = 400;
  const cases: { name: string; ll: number; loopback: number; overrides: Record<string, unknown> }[] = [
    { name: "valid", ll: VALID, loopback: VALID, overrides: {} },
    {
      name: "score.scaled of 1.5",
      ll: REFUSED,
      loopback: REFUSED,
      overrides: { result: { score: { scaled: 1.5 } } },
    },
    {
      name: "score.raw above max",
      ll: REFUSED,
      loopback: REFUSED,
      overrides: { result: { score: { raw: 3, min: 0, max: 2 } } },
    },
    {
      name: "an object id with spaces",
      ll: REFUSED,
      loopback: REFUSED,
      overrides: { object: { objectType: "Activity", id: "not an iri" } },
    },
    {
      name: "a relative object IRI",
      ll: REFUSED,
      loopback: REFUSED,
      overrides: { object: { objectType: "Activity", id: "/activities/1" } },
    },
    {
      name: "a verb id that is no IRI",
      ll: REFUSED,
      loopback: REFUSED,
      overrides: { verb: { id: "answered" } },
    },
    {
      name: "an activity type that is no IRI",
      ll: REFUSED,
      loopback: REFUSED,
      overrides: { object: { id: "https://x.test/a", definition: { type: "lesson" } } },
    },
    {
      name: "a duration that is not ISO 8601",
      ll: REFUSED,
      loopback: REFUSED,
      overrides: { result: { duration: "30 seconds" } },
    },
    {
      name: "a language-map key that is no tag",
      ll: REFUSED,
      loopback: REFUSED,
      overrides: { verb: { id: "http://adlnet.gov/expapi/verbs/answered", display: { "english!": "x" } } },
    },
    {
      name: "a context.language that is no tag",
      ll: REFUSED,
      loopback: REFUSED,
      overrides: { context: { language: "español!" } },
    },
    {
      name: "an extension key that is no IRI",
      ll: REFUSED,
      loopback: REFUSED,
      overrides: { context: { extensions: { level: "A2" } } },
    },
    { name: "an id that is not a UUID", ll: REFUSED, loopback: REFUSED, overrides: { id: "abc" } },
    { name: "an unknown property", ll: REFUSED, loopback: REFUSED, overrides: { colour: "red" } },
    {
      name: "an account homePage that is no IRI",
      ll: REFUSED,
      loopback: REFUSED,
      overrides: { actor: { account: { homePage: "lingua", name: "u" } } },
    },
    {
      name: "a timestamp without a time zone",
      ll: REFUSED,
      loopback: REFUSED,
      overrides: { timestamp: "2026-11-20T09:30:00" },
    },
    // Stricter on purpose (see above).
    {
      name: "stored set by the client",
      ll: VALID,
      loopback: REFUSED,
      overrides: { stored: "2026-11-20T09:30:00Z" },
    },
    {
      name: "authority set by the client",
      ll: VALID,
      loopback: REFUSED,
      overrides: { authority: { mbox: "mailto:lrs@lingua.test" } },
    },
    { name: "no id", ll: VALID, loopback: REFUSED, overrides: { id: undefined } },
  ];

  it.each(cases)(
    "$name: Learning Locker $ll, loopback $loopback",
    async ({ ll: expectedLl, loopback: expectedLoopback, overrides }) => {
      const variant = statement(overrides);
      const real = await post([variant]);
      const ours = await createLrs({}, randomUUID(), loopback.url);
      const res = await fetch(`${ours.endpoint}statements`, {
        method: "POST",
        headers: {
          Authorization: `Basic ${Buffer.from("lrs-user:lrs-pass").toString("base64")}`,
          "X-Experience-API-Version": "1.0.3",
          "Content-Type": "application/json",
        },
        body: JSON.stringify([variant]),
      });
      expect([real.status, res.status], `${real.context} / ${await res.text()}`).toEqual([
        expectedLl,
        expectedLoopback,
      ]);
    },
  );
});
