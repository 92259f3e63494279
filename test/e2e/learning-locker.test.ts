/**
 * A real LRS runs here: Learning Locker's `xapi-statements` (test/e2e/helpers/learning-locker.ts), in
 * memory, on loopback. These tests prove it starts under this Node and that it is the strict
 * counterpart the xAPI forwarding tests need: what a conformant LRS accepts it stores, and a score
 * out of range, a bad IRI, a missing version header, wrong credentials and a conflicting id are each
 * refused.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LearningLocker, startLearningLocker } from "./helpers/learning-locker";

let lrs: LearningLocker;

beforeAll(async () => {
  lrs = await startLearningLocker();
});

afterAll(async () => {
  await lrs?.close();
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
