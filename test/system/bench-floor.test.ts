/**
 * The benchmark's floor worker (scripts/bench/floor-worker.mjs) sends the headers of the Lingua
 * response each floor stands for, so that a goal's ratio compares the work behind a response and
 * not the number of its headers. These tests keep its copies of those headers equal to Lingua's.
 */
import { describe, expect, it } from "vitest";
import floorWorker, { LINGUA_RESPONSE_HEADERS } from "../../scripts/bench/floor-worker.mjs";
import { DEFAULT_FRAMING_HEADERS, SECURITY_HEADERS } from "../../src/platform/http/middleware";
import { call } from "../helpers/api";
import { createTenant } from "../helpers/tenants";

/** Values that change per request (or per token): compared by name only. */
const PER_REQUEST = new Set([
  "x-request-id",
  "x-ratelimit-limit",
  "x-ratelimit-remaining",
  "x-ratelimit-reset",
  "ratelimit-policy",
  "ratelimit",
]);
const headerNames = (response: Response) =>
  [...response.headers.keys()].filter((name) => name !== "content-length").sort();
const fixedHeaders = (response: Response) =>
  [...response.headers].filter(([name]) => !PER_REQUEST.has(name) && name !== "content-length").sort();
const LINGUA_REQUEST_ID = /^req_[0-9a-f]{32}$/;

/** The floor's Durable Object, answering as FloorObject.ping does. */
const floorEnv = {
  FLOOR_OBJECT: {
    idFromName: (name: string) => name,
    get: () => ({ ping: async () => ({ ok: true, at: Date.now() }) }),
  },
};
const floorFetch = (path: string) => floorWorker.fetch(new Request(`http://floor.test${path}`), floorEnv);

describe("the benchmark's floor worker", () => {
  it("copies Lingua's security and framing headers", () => {
    expect(LINGUA_RESPONSE_HEADERS).toEqual([...SECURITY_HEADERS, ...DEFAULT_FRAMING_HEADERS]);
  });

  it("answers /bare with the body and headers of Lingua's /healthz, and a request id of the same shape", async () => {
    const ours = await call("/healthz");
    const floor = await floorFetch("/bare");
    expect(floor.status).toBe(200);
    expect(headerNames(floor)).toEqual(headerNames(ours));
    expect(fixedHeaders(floor)).toEqual(fixedHeaders(ours));
    expect(ours.headers.get("X-Request-Id")).toMatch(LINGUA_REQUEST_ID);
    expect(floor.headers.get("X-Request-Id")).toMatch(LINGUA_REQUEST_ID);
    expect((await floorFetch("/bare")).headers.get("X-Request-Id")).not.toBe(
      floor.headers.get("X-Request-Id"),
    );
    expect(await floor.text()).toBe(await ours.text());
  });

  it("answers /do with the headers of an authenticated Lingua response (GET /api/auth/me)", async () => {
    const { learner } = await createTenant();
    const ours = await call("/api/auth/me", { token: learner.token });
    expect(ours.status).toBe(200);
    const floor = await floorFetch("/do");
    expect(floor.status).toBe(200);
    expect(headerNames(floor)).toEqual(headerNames(ours));
    expect(fixedHeaders(floor)).toEqual(fixedHeaders(ours));
    const [remaining, reset] = [
      floor.headers.get("X-RateLimit-Remaining"),
      floor.headers.get("X-RateLimit-Reset"),
    ];
    expect(floor.headers.get("RateLimit")).toBe(`"minute";r=${remaining};t=${reset}`);
    expect(floor.headers.get("RateLimit-Policy")).toBe(
      `"minute";q=${floor.headers.get("X-RateLimit-Limit")};w=60`,
    );
  });

  it("answers the -plain floors, the reference, with a content type alone", async () => {
    for (const path of ["/bare-plain", "/do-plain"]) {
      const plain = await floorFetch(path);
      expect(plain.status).toBe(200);
      expect([...plain.headers]).toEqual([["content-type", "application/json"]]);
    }
  });
});
