import { describe, expect, it } from "vitest";
import { callPublic, createCourse } from "../helpers/catalog";
import { freshIp } from "../helpers/tenants";

// vitest.config.ts gives PUBLIC_RATE_LIMITER 30 requests per 60 s (wrangler.toml: 600). The binding
// counts in fixed windows, so a burst that straddles a window boundary may be allowed up to twice that.
const LIMIT = 30;

describe("per-client-IP limit of the public catalogue", () => {
  it("answers 429 problem+json with Retry-After: 60 once an address is over the limit, cache hits included", async () => {
    const course = await createCourse();
    const ip = freshIp();
    const statuses: number[] = [];
    let refused: Response | undefined;
    for (let i = 0; i < LIMIT * 2 + 1 && !refused; i++) {
      const res = await callPublic(
        i % 2 ? "/api/public/courses?q=test+course" : `/api/public/courses/${course.slug}`,
        { ip },
      );
      statuses.push(res.status);
      if (res.status === 429) refused = res;
      else await res.text();
    }
    expect(refused, `statuses: ${statuses.join(",")}`).toBeDefined();
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(LIMIT);
    expect(refused!.headers.get("Content-Type")).toBe("application/problem+json");
    expect(refused!.headers.get("Retry-After")).toBe("60");
    expect(refused!.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(refused!.headers.get("Cache-Control")).toBe("no-store");
    const body = await refused!.json<any>();
    expect(body).toMatchObject({
      status: 429,
      code: "rate_limited",
      type: "https://api.lingua.test/api/docs/errors#rate_limited",
    });
    expect(body.request_id).toBe(refused!.headers.get("X-Request-Id"));

    // Another address is unaffected.
    expect((await callPublic(`/api/public/courses/${course.slug}`, { ip: freshIp() })).status).toBe(200);
  });
});
