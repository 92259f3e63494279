import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { config } from "../../src/platform/config";

const base = { ENCRYPTION_KEY: "a-key" } as unknown as Cloudflare.Env;
const withVars = (vars: Record<string, string>) => ({ ...base, ...vars }) as unknown as Cloudflare.Env;

describe("configuration", () => {
  it("parses the test deployment's variables into typed settings", () => {
    const settings = config(env);
    expect(settings.rateLimitWindowSeconds).toBe(10);
    expect(settings.webhooks.retrySchedule).toEqual([1, 1, 1]);
    expect(settings.webhooks.disableAfterMs).toBe(24 * 3_600_000);
    expect(settings.exports).toMatchObject({ pageSize: 7, timeBudgetMs: 1, partSize: 5 * 1024 * 1024 });
  });

  it("fills the documented defaults for variables that are absent", () => {
    const settings = config(withVars({}));
    expect(settings.rateLimitWindowSeconds).toBe(60);
    expect(settings.sessionTtlDays).toBe(30);
    expect(settings.outbound).toEqual({ allowLoopback: false, dohUrl: null });
    expect(settings.webhooks.retrySchedule).toEqual([60, 600, 6000]);
  });

  it.each([
    ["WEBHOOK_RETRY_DELAYS_SECONDS", "1,2"],
    ["WEBHOOK_RETRY_DELAYS_SECONDS", "a,b,c"],
    ["RATE_LIMIT_WINDOW_SECONDS", "0"],
    ["EXPORT_PART_SIZE_BYTES", String(5 * 1024 * 1024 - 1)],
    ["ALLOW_LOOPBACK_TARGETS", "yes"],
    ["OUTBOUND_DOH_URL", "not a url"],
    ["OUTBOUND_DOH_URL", "ftp://resolver.example/dns-query"],
  ])("refuses %s=%s, naming the variable", (name, value) => {
    expect(() => config(withVars({ [name]: value }))).toThrow(name);
  });

  it("refuses a deployment without ENCRYPTION_KEY", () => {
    expect(() => config({} as Cloudflare.Env)).toThrow("ENCRYPTION_KEY");
  });
});
