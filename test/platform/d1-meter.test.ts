import { describe, expect, it } from "vitest";
import { call } from "../helpers/api";
import { createTenant } from "../helpers/tenants";

// The benchmarks' D1 meter (D1_METER = "true", never set in wrangler.toml). In a file of its own:
// once a request has been metered, the isolate meters every later request too.
const METERED = { D1_METER: "true" } as Partial<Cloudflare.Env>;

describe("D1 meter (benchmarks only)", () => {
  it("counts an API request's D1 statements and rows, and nothing outside the API", async () => {
    const { learner } = await createTenant();
    const plain = await call("/api/courses", { token: learner.token });
    expect(plain.status).toBe(200);
    expect(plain.headers.get("X-D1-Queries")).toBeNull();
    await plain.arrayBuffer();

    const metered = await call("/api/courses", { token: learner.token, env: METERED });
    expect(metered.status).toBe(200);
    expect(Number(metered.headers.get("X-D1-Queries"))).toBeGreaterThanOrEqual(1);
    expect(metered.headers.get("X-D1-Rows-Read")).toMatch(/^\d+$/);
    expect(metered.headers.get("X-D1-Rows-Written")).toBe("0");
    await metered.arrayBuffer();

    // `me` is answered from the token's object: no D1 statement in the request.
    const me = await call("/api/auth/me", { token: learner.token, env: METERED });
    expect(me.headers.get("X-D1-Queries")).toBe("0");
    await me.arrayBuffer();

    const health = await call("/healthz", { env: METERED });
    expect(health.status).toBe(200);
    expect(health.headers.get("X-D1-Queries")).toBeNull();
    await health.arrayBuffer();
  });
});
