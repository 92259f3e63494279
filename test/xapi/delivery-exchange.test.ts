import { describe, expect, it } from "vitest";
import { answerError, exchange, type PendingStatement } from "../../src/domains/xapi/delivery/exchange";
import { type BatchItem, type BatchResult, xapiTarget } from "../../src/domains/xapi/delivery/target";
import type { EndpointRow } from "../../src/domains/xapi/lrs-client";
import type { OutboundResult } from "../../src/platform/outbound";
import { testContext } from "../helpers/context";

/** The exchange of one attempt against a scripted LRS: which statements each request carried, and how it ended. */

const statements = (n: number): PendingStatement[] =>
  Array.from({ length: n }, (_, i) => ({ id: `s${i + 1}`, body: JSON.stringify({ id: `s${i + 1}` }) }));

function answer(status: number | null, extra: Partial<OutboundResult> = {}): OutboundResult {
  const ok = status !== null && status >= 200 && status < 300;
  return {
    ok,
    status,
    headers: new Headers(),
    bodyPrefix: "",
    durationMs: 1,
    errorCode: status === null ? "timeout" : ok ? null : "http_status",
    error: status === null ? "Timed out after 1000 ms" : ok ? null : `HTTP ${status}`,
    ...extra,
  };
}

/** An LRS that answers by a rule over the ids it receives; records every request's ids. */
function lrs(rule: (ids: string[]) => OutboundResult) {
  const requests: string[][] = [];
  const post = async (body: string) => {
    const ids = (JSON.parse(body) as { id: string }[]).map((s) => s.id);
    requests.push(ids);
    return rule(ids);
  };
  return { requests, post };
}

const run = (
  list: PendingStatement[],
  post: (body: string) => Promise<OutboundResult>,
  deadline = Infinity,
) => exchange(list, post, deadline, () => 0);

describe("one attempt of a batch", () => {
  it("sends the batch in one request when the LRS takes it", async () => {
    const server = lrs(() => answer(200));
    const ex = await run(statements(3), server.post);
    expect(server.requests).toEqual([["s1", "s2", "s3"]]);
    expect([...ex.settled.values()].every((s) => s.status === "sent")).toBe(true);
    expect(ex).toMatchObject({ accepted: true, stop: null, ranOut: false, requests: 1, rejection: null });
  });

  it("isolates a 400: each statement alone, the bad one failed with the LRS's message", async () => {
    const server = lrs((ids) =>
      ids.includes("s2") ? answer(400, { bodyPrefix: '{"message":"bad IRI"}' }) : answer(200),
    );
    const ex = await run(statements(3), server.post);
    expect(server.requests).toEqual([["s1", "s2", "s3"], ["s1"], ["s2"], ["s3"]]);
    expect(ex.settled.get("s2")).toEqual({ status: "failed", error: 'HTTP 400: {"message":"bad IRI"}' });
    expect(ex.settled.get("s1")).toEqual({ status: "sent" });
    expect(ex.settled.get("s3")).toEqual({ status: "sent" });
    expect(ex.carried.get("s1")).toBe(2);
    expect(ex.rejection).toBe('HTTP 400: {"message":"bad IRI"}');
  });

  it("isolates a 409: each statement's own 409 or 2xx is sent", async () => {
    const server = lrs((ids) => (ids.length > 1 || ids[0] === "s1" ? answer(409) : answer(204)));
    const ex = await run(statements(2), server.post);
    expect(server.requests).toEqual([["s1", "s2"], ["s1"], ["s2"]]);
    expect([...ex.settled.values()]).toEqual([{ status: "sent" }, { status: "sent" }]);
  });

  it("splits a 413 in halves until it fits; a statement too large alone is failed", async () => {
    const server = lrs((ids) => (ids.length > 2 || ids.includes("s5") ? answer(413) : answer(200)));
    const ex = await run(statements(5), server.post);
    expect(server.requests).toEqual([
      ["s1", "s2", "s3", "s4", "s5"],
      ["s1", "s2", "s3"],
      ["s1", "s2"],
      ["s3"],
      ["s4", "s5"],
      ["s4"],
      ["s5"],
    ]);
    expect(ex.settled.get("s5")).toMatchObject({
      status: "failed",
      error: expect.stringMatching(/^HTTP 413/),
    });
    expect([1, 2, 3, 4].map((i) => ex.settled.get(`s${i}`)?.status)).toEqual([
      "sent",
      "sent",
      "sent",
      "sent",
    ]);
  });

  it("stops at an answer that is not about the statements (503 mid-isolation): what was accepted stays sent", async () => {
    let calls = 0;
    const server = lrs(() => {
      calls += 1;
      if (calls === 1) return answer(400);
      if (calls === 3) return answer(503, { headers: new Headers({ "Retry-After": "30" }) });
      return answer(200);
    });
    const ex = await run(statements(4), server.post);
    expect(server.requests).toEqual([["s1", "s2", "s3", "s4"], ["s1"], ["s2"]]);
    expect(ex.settled.get("s1")).toEqual({ status: "sent" });
    expect(ex.settled.has("s2")).toBe(false);
    expect(ex.stop?.error).toBe("HTTP 503");
    expect(ex.stop?.result.headers?.get("Retry-After")).toBe("30");
    expect(ex.accepted).toBe(true);
  });

  it("stops at a time-out, a 401 or a redirect, with the failure's own words", async () => {
    for (const [result, error] of [
      [answer(null), "Timed out after 1000 ms"],
      [answer(401, { bodyPrefix: "bad credentials" }), "HTTP 401: bad credentials"],
      [
        answer(302, { errorCode: "redirect", error: "Redirect (302) not followed" }),
        "Redirect (302) not followed",
      ],
    ] as const) {
      const ex = await run(statements(2), lrs(() => result).post);
      expect(ex.stop?.error).toBe(error);
      expect(ex.settled.size).toBe(0);
      expect(ex.accepted).toBe(false);
    }
  });

  it("starts no request after the deadline but the first; the rest waits", async () => {
    let now = 0;
    const server = lrs((ids) => {
      now += 1_000;
      return ids.length > 1 ? answer(400) : answer(200);
    });
    const ex = await exchange(statements(4), server.post, 2_500, () => now);
    expect(server.requests).toEqual([["s1", "s2", "s3", "s4"], ["s1"], ["s2"]]);
    expect(ex.ranOut).toBe(true);
    expect(ex.settled.size).toBe(2);
  });

  it("keeps the first KiB of what the LRS said", () => {
    const long = "x".repeat(3000);
    expect(answerError(answer(400, { bodyPrefix: long }))).toBe(`HTTP 400: ${"x".repeat(1024)}`);
    expect(answerError(answer(400, { bodyPrefix: "  " }))).toBe("HTTP 400");
  });
});

describe("recording answered attempts", () => {
  const endpointUpdates = (statements: unknown[]) =>
    statements.filter((s) =>
      (s as { toSQL(): { sql: string } }).toSQL().sql.startsWith('update "xapi_endpoints"'),
    ).length;
  const item = (id: string, endpointId: string): BatchItem => ({
    id,
    attempt: 1,
    endpoint: { id: endpointId } as EndpointRow,
    statements: statements(2),
    shared: true,
  });
  const result = async (status: number): Promise<BatchResult> => {
    const ex = await run(statements(2), lrs(() => answer(status)).post);
    return status === 200
      ? { status: "succeeded", exchange: ex, continuation: false, error: null }
      : {
          status: "retrying",
          retryInSeconds: 60,
          exchange: ex,
          continuation: false,
          error: `HTTP ${status}`,
        };
  };

  it("updates an endpoint's health once for the attempts of one write that came to the same", async () => {
    const ctx = testContext();
    const ok = await result(200);
    const record = (items: { item: BatchItem; result: BatchResult }[]) =>
      endpointUpdates(xapiTarget.record(ctx, items, 1_800_000_000_000));
    // Three accepted attempts of one endpoint: its last success set once.
    expect(
      record([
        { item: item("xbt_1", "xep_a"), result: ok },
        { item: item("xbt_2", "xep_a"), result: ok },
        { item: item("xbt_3", "xep_a"), result: ok },
      ]),
    ).toBe(1);
    // Another endpoint's, or a different outcome, is written too.
    expect(
      record([
        { item: item("xbt_1", "xep_a"), result: ok },
        { item: item("xbt_2", "xep_b"), result: ok },
        { item: item("xbt_3", "xep_a"), result: await result(503) },
      ]),
    ).toBe(3);
  });
});
