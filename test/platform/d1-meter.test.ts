import { createExecutionContext, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { withD1Meter } from "../../scripts/bench/worker-wrappers.mjs";
import worker from "../../src/index";
import { BASE, call, fetchWorker } from "../helpers/api";
import { createTenant } from "../helpers/tenants";

// The benchmarks' D1 meter: a wrapper around the worker that only the bench loads
// (scripts/bench/worker-wrappers.mjs); the worker itself carries no metering code.
const metered = withD1Meter(worker);

function callMetered(path: string, token?: string) {
  const headers = new Headers(token ? { Authorization: `Bearer ${token}` } : {});
  return fetchWorker(new Request(new URL(path, BASE), { headers }), env, createExecutionContext(), metered);
}

describe("D1 meter (benchmarks only)", () => {
  it("counts an API request's D1 statements and rows, and nothing outside the API", async () => {
    const { learner } = await createTenant();
    const plain = await call("/api/courses", { token: learner.token });
    expect(plain.status).toBe(200);
    expect(plain.headers.get("X-D1-Queries")).toBeNull();
    await plain.arrayBuffer();

    const counted = await callMetered("/api/courses", learner.token);
    expect(counted.status).toBe(200);
    expect(Number(counted.headers.get("X-D1-Queries"))).toBeGreaterThanOrEqual(1);
    expect(counted.headers.get("X-D1-Rows-Read")).toMatch(/^\d+$/);
    expect(counted.headers.get("X-D1-Rows-Written")).toBe("0");
    await counted.arrayBuffer();

    // The same request unwrapped right after: the worker itself never meters.
    const after = await call("/api/courses", { token: learner.token });
    expect(after.headers.get("X-D1-Queries")).toBeNull();
    await after.arrayBuffer();

    // `me` is answered from the token's object: no D1 statement in the request.
    const me = await callMetered("/api/auth/me", learner.token);
    expect(me.headers.get("X-D1-Queries")).toBe("0");
    await me.arrayBuffer();

    const health = await callMetered("/healthz");
    expect(health.status).toBe(200);
    expect(health.headers.get("X-D1-Queries")).toBeNull();
    await health.arrayBuffer();
  });
});
