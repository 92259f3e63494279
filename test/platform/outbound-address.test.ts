import { describe, expect, it } from "vitest";
import { classifyAddress, classifyHost, urlProblem } from "../../src/platform/outbound";
import { parseRetryAfter, retryDelaySeconds } from "../../src/platform/outbound/retry";

const production = { allowLoopback: false, dohUrl: null };
const development = { allowLoopback: true, dohUrl: null };

type Verdict = "public" | "loopback" | "refused";

/**
 * Every host form the gate knows, as an integrator would type it in a URL, with its verdict. The URL
 * parser normalises first (decimal, octal and short IPv4, dotted IPv6 tails), so these are judged as
 * the hosts a request would actually reach.
 */
const HOSTS: [url: string, verdict: Verdict, what: string][] = [
  // Names
  ["https://hooks.example.com/x", "public", "a public name"],
  ["https://localhost/x", "loopback", "localhost"],
  ["https://LOCALHOST./x", "loopback", "localhost, upper case, one trailing dot"],
  ["https://localhost../x", "loopback", "localhost with two trailing dots"],
  ["https://localhost.../x", "loopback", "localhost with three trailing dots"],
  ["https://%6c%6fcalhost/x", "loopback", "localhost, percent-encoded"],
  ["https://api.localhost/x", "refused", "a .localhost name"],
  ["https://printer.local/x", "refused", "an mDNS .local name"],
  ["https://db.internal/x", "refused", "an .internal name"],
  ["https://db.internal../x", "refused", "an .internal name with trailing dots"],
  ["https://metadata.google.internal/x", "refused", "the GCP metadata name"],
  ["https://metadata/x", "refused", "a single-label name"],
  ["https://router.home.arpa/x", "refused", "a home.arpa name"],
  // IPv4, every spelling the URL parser accepts
  ["https://8.8.8.8/x", "public", "a public IPv4"],
  ["https://172.32.0.1/x", "public", "just outside 172.16.0.0/12"],
  ["https://127.0.0.1/x", "loopback", "loopback"],
  ["https://127.255.255.254/x", "loopback", "the top of 127.0.0.0/8"],
  ["https://2130706433/x", "loopback", "loopback as one decimal number"],
  ["https://0x7f.1/x", "loopback", "loopback in hex, short form"],
  ["https://017700000001/x", "loopback", "loopback in octal"],
  ["https://127.1/x", "loopback", "loopback, short form"],
  ["https://0.0.0.0/x", "refused", "the unspecified address"],
  ["https://0/x", "refused", "the unspecified address as 0"],
  ["https://10.1.2.3/x", "refused", "private 10/8"],
  ["https://172.16.0.1/x", "refused", "private 172.16/12"],
  ["https://172.31.255.255/x", "refused", "the top of 172.16/12"],
  ["https://192.168.1.10/x", "refused", "private 192.168/16"],
  ["https://169.254.169.254/latest/meta-data", "refused", "the metadata service"],
  ["https://100.64.0.1/x", "refused", "carrier-grade NAT"],
  ["https://192.0.0.1/x", "refused", "IETF protocol assignments"],
  ["https://192.0.2.1/x", "refused", "TEST-NET-1"],
  ["https://198.18.0.1/x", "refused", "benchmarking"],
  ["https://192.88.99.1/x", "refused", "the 6to4 relay anycast"],
  ["https://224.0.0.1/x", "refused", "multicast"],
  ["https://255.255.255.255/x", "refused", "broadcast"],
  // IPv6
  ["https://[2606:4700::1111]/x", "public", "a public IPv6"],
  ["https://[2001:4860:4860::8888]/x", "public", "a public IPv6 in 2001::/16 (not Teredo)"],
  ["https://[::]/x", "refused", "unspecified"],
  ["https://[::1]/x", "loopback", "loopback"],
  ["https://[fc00::1]/x", "refused", "unique local"],
  ["https://[fd00:ec2::254]/x", "refused", "the AWS metadata service"],
  ["https://[fe80::1]/x", "refused", "link-local"],
  ["https://[fec0::1]/x", "refused", "site-local"],
  ["https://[feff::1]/x", "refused", "the top of site-local"],
  ["https://[ff02::1]/x", "refused", "multicast"],
  ["https://[2001:db8::1]/x", "refused", "documentation"],
  ["https://[100::1]/x", "refused", "discard-only"],
  ["https://[64:ff9b:1::a00:1]/x", "refused", "local-use NAT64"],
  // IPv6 forms that carry an IPv4 address: judged by the address they carry
  ["https://[::ffff:10.0.0.1]/x", "refused", "IPv4-mapped private"],
  ["https://[::ffff:127.0.0.1]/x", "loopback", "IPv4-mapped loopback"],
  ["https://[::ffff:169.254.169.254]/x", "refused", "IPv4-mapped metadata"],
  ["https://[::ffff:8.8.8.8]/x", "public", "IPv4-mapped public"],
  ["https://[::ffff:0:10.0.0.1]/x", "refused", "SIIT private"],
  ["https://[::ffff:0:8.8.8.8]/x", "public", "SIIT public"],
  ["https://[::10.0.0.1]/x", "refused", "IPv4-compatible private"],
  ["https://[::127.0.0.1]/x", "loopback", "IPv4-compatible loopback"],
  ["https://[::8.8.8.8]/x", "public", "IPv4-compatible public"],
  ["https://[64:ff9b::10.0.0.1]/x", "refused", "NAT64 private"],
  ["https://[64:ff9b::169.254.169.254]/x", "refused", "NAT64 metadata"],
  ["https://[64:ff9b::8.8.8.8]/x", "public", "NAT64 public"],
  ["https://[2002:a00:1::1]/x", "refused", "6to4 carrying 10.0.0.1"],
  ["https://[2002:a9fe:a9fe::]/x", "refused", "6to4 carrying the metadata service"],
  ["https://[2002:7f00:1::]/x", "loopback", "6to4 carrying 127.0.0.1"],
  ["https://[2002:808:808::1]/x", "public", "6to4 carrying 8.8.8.8"],
  ["https://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/x", "refused", "Teredo, client 10.0.0.1"],
  ["https://[2001:0:a00:1:8000:63bf:f7f7:f7f7]/x", "refused", "Teredo, server 10.0.0.1"],
  ["https://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/x", "public", "Teredo, public server and client"],
];

describe("outbound hosts, every form", () => {
  it.each(HOSTS)("%s is %s (%s)", (url, verdict) => {
    expect(classifyHost(new URL(url).hostname).kind).toBe(verdict);
  });

  it.each(HOSTS)("%s in production and development", (url, verdict) => {
    const inProduction = urlProblem(url, production);
    const inDevelopment = urlProblem(url, development);
    if (verdict === "public") {
      expect(inProduction).toBeNull();
      expect(inDevelopment).toBeNull();
    } else if (verdict === "loopback") {
      expect(inProduction).toMatch(/must not point at/);
      expect(inDevelopment).toBeNull();
    } else {
      // Development reaches loopback and nothing else: the same refusal as production.
      expect(inProduction).toMatch(/must not point at/);
      expect(inDevelopment).toBe(inProduction);
    }
  });

  it.each([
    ["10.0.0.1", "refused"],
    ["127.0.0.53", "loopback"],
    ["93.184.215.14", "public"],
    ["::1", "loopback"],
    ["fd12::1", "refused"],
    ["::ffff:192.168.0.1", "refused"],
    ["2606:4700:4700::1111", "public"],
    ["not-an-address", "refused"],
  ])("a DNS answer %s is %s", (answer, verdict) => {
    expect(classifyAddress(answer).kind).toBe(verdict);
  });
});

describe("outbound URLs", () => {
  it("explains each refusal", () => {
    expect(urlProblem(`https://example.com/${"a".repeat(2100)}`, production)).toMatch(/2048/);
    expect(urlProblem("https://example.com/#frag", production)).toMatch(/fragment/);
    expect(urlProblem("https://user:pw@example.com/", production)).toMatch(/credentials/);
    expect(urlProblem("example.com/hook", production)).toMatch(/absolute/);
    expect(urlProblem("ftp://example.com/hook", production)).toMatch(/https/);
    expect(urlProblem("http://example.com/hook", production)).toBe("must be an https URL");
    expect(urlProblem("https://10.0.0.1/hook", production)).toBe("must not point at a private address");
    expect(urlProblem("https://example.com/hook", production)).toBeNull();
  });

  it("admits http in development for loopback only", () => {
    expect(urlProblem("http://localhost:8080/hook", development)).toBeNull();
    expect(urlProblem("http://127.0.0.1:8080/hook", development)).toBeNull();
    expect(urlProblem("http://[::1]:8080/hook", development)).toBeNull();
    expect(urlProblem("http://example.com/hook", development)).toBe("must be an https URL");
    expect(urlProblem("http://192.168.1.10/hook", development)).toMatch(/private/);
    expect(urlProblem("ftp://localhost/hook", development)).toBe("must be an http or https URL");
  });
});

describe("retry policy", () => {
  const schedule = [60, 600, 6000];

  it("retries once per entry of the schedule, with its delays within ±20%", () => {
    expect(retryDelaySeconds(1, schedule, null, () => 0.5)).toBe(60);
    expect(retryDelaySeconds(2, schedule, null, () => 0)).toBe(480);
    expect(retryDelaySeconds(3, schedule, null, () => 0.9999)).toBe(7200);
    expect(retryDelaySeconds(4, schedule, null)).toBeNull();
    for (let i = 0; i < 200; i++) {
      const d = retryDelaySeconds(2, schedule, null) ?? 0;
      expect(d).toBeGreaterThanOrEqual(480);
      expect(d).toBeLessThanOrEqual(720);
    }
  });

  it("takes a longer Retry-After, never a shorter one, and caps at the queue's 12 hours", () => {
    expect(retryDelaySeconds(1, schedule, 300, () => 0.5)).toBe(300);
    expect(retryDelaySeconds(1, schedule, 5, () => 0.5)).toBe(60);
    expect(retryDelaySeconds(1, schedule, 1_000_000, () => 0.5)).toBe(43_200);
  });

  it("reads Retry-After as seconds or an HTTP date", () => {
    const now = Date.parse("2026-11-21T10:00:00Z");
    expect(parseRetryAfter("120", now)).toBe(120);
    expect(parseRetryAfter("Sat, 21 Nov 2026 10:05:00 GMT", now)).toBe(300);
    expect(parseRetryAfter("Sat, 21 Nov 2026 09:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
  });
});
