import { env } from "cloudflare:test";
import { describe, expect, inject, it, vi } from "vitest";
import { config } from "../../src/platform/config";

const base = { ENCRYPTION_KEY: "a-key" } as unknown as Cloudflare.Env;
const CLOUDFLARE_DOH = "https://cloudflare-dns.com/dns-query";
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
    expect(settings.outbound).toEqual({ allowLoopback: false, dohUrl: CLOUDFLARE_DOH });
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
    ["OUTBOUND_DOH_URL", ""],
    ["OUTBOUND_DOH_URL", "http://resolver.example/dns-query"],
  ])("refuses %s=%s, naming the variable", (name, value) => {
    expect(() => config(withVars({ [name]: value }))).toThrow(name);
  });

  it("refuses a deployment without ENCRYPTION_KEY", () => {
    expect(() => config({} as Cloudflare.Env)).toThrow("ENCRYPTION_KEY");
  });
});

describe("the outbound resolver check (OUTBOUND_DOH_URL)", () => {
  it("is on in the shipped wrangler.toml: Cloudflare's DNS-over-HTTPS resolver, loopback refused", () => {
    const shipped = inject("shippedVars");
    expect(shipped.OUTBOUND_DOH_URL).toBe(CLOUDFLARE_DOH);
    expect(config(withVars(shipped)).outbound).toEqual({ allowLoopback: false, dohUrl: CLOUDFLARE_DOH });
  });

  it("is set explicitly, never to a public resolver, by the tests and by npm run dev", () => {
    expect(env.OUTBOUND_DOH_URL).toBe("off");
    expect(config(env).outbound.dohUrl).toBeNull();
    const dev = inject("devVars");
    expect(dev).toMatchObject({ ALLOW_LOOPBACK_TARGETS: "true", OUTBOUND_DOH_URL: "off" });
    expect(config(withVars(dev)).outbound).toEqual({ allowLoopback: true, dohUrl: null });
  });

  it('is off only when it says "off"; plain http only towards a loopback resolver (a local stub)', () => {
    expect(
      config(withVars({ OUTBOUND_DOH_URL: "off", ALLOW_LOOPBACK_TARGETS: "true" })).outbound.dohUrl,
    ).toBeNull();
    expect(config(withVars({ OUTBOUND_DOH_URL: "https://dns.google/resolve" })).outbound.dohUrl).toBe(
      "https://dns.google/resolve",
    );
    expect(config(withVars({ OUTBOUND_DOH_URL: "http://127.0.0.1:5353/dns-query" })).outbound.dohUrl).toBe(
      "http://127.0.0.1:5353/dns-query",
    );
  });

  it("off outside development is logged as a warning, naming what it risks", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    try {
      config(withVars({ OUTBOUND_DOH_URL: "off", ALLOW_LOOPBACK_TARGETS: "true" }));
      expect(warn).not.toHaveBeenCalled();
      config(withVars({ OUTBOUND_DOH_URL: "off" }));
      expect(warn).toHaveBeenCalledTimes(1);
      const entry = JSON.parse(String(warn.mock.calls[0]?.[0]));
      expect(entry).toMatchObject({ level: "warn", variable: "OUTBOUND_DOH_URL" });
      expect(entry.message).toMatch(/host names are judged by their text alone/);
    } finally {
      warn.mockRestore();
    }
  });
});
