import { z } from "zod";
import { BoundedMap } from "../bounded-map";
import { parseIPv4, parseIPv6 } from "./address";
import type { DnsFailure } from "./codes";

/**
 * Host names resolved over DNS-over-HTTPS (the JSON form of Cloudflare's and Google's resolvers:
 * `GET ?name=…&type=A` with `Accept: application/dns-json`), so that the outbound gate can judge the
 * addresses a name points at, not only its text. Answers are cached for their TTL, at most five
 * minutes; a zero TTL is not cached at all.
 */

export type Resolution =
  | { ok: true; addresses: string[] }
  /** `detail` is for the log only: it may carry the resolver's words. */
  | { ok: false; reason: DnsFailure; detail: string };

const MAX_CACHE_SECONDS = 300;
const RESOLVER_TIMEOUT_MS = 3_000;
const RECORD_TYPES = { A: 1, AAAA: 28 } as const;
const IS_ADDRESS = {
  A: (data: string) => parseIPv4(data) !== null,
  AAAA: (data: string) => parseIPv6(data) !== null,
} as const;

const DohAnswer = z.object({
  Status: z.number().int(),
  Answer: z
    .array(z.object({ type: z.number().int(), TTL: z.number().int().nonnegative(), data: z.string() }))
    .optional(),
});

const cache = new BoundedMap<string, { addresses: string[]; expiresAt: number }>(1_000);

async function query(
  dohUrl: string,
  host: string,
  type: keyof typeof RECORD_TYPES,
): Promise<{ addresses: string[]; ttl: number; nameError: boolean }> {
  const url = new URL(dohUrl);
  url.searchParams.set("name", host);
  url.searchParams.set("type", type);
  const response = await fetch(url, {
    headers: { Accept: "application/dns-json" },
    signal: AbortSignal.timeout(RESOLVER_TIMEOUT_MS),
  });
  if (!response.ok) throw new Error(`resolver answered HTTP ${response.status}`);
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    throw new Error("resolver answered a body that is not JSON");
  }
  const parsed = DohAnswer.safeParse(body);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    throw new Error(`resolver answered an unexpected body (${issues.join("; ").slice(0, 300)})`);
  }
  const answer = parsed.data;
  // 3 is NXDOMAIN: a definite "no such name"; any other non-zero status is the resolver's failure.
  if (answer.Status !== 0 && answer.Status !== 3) throw new Error(`resolver status ${answer.Status}`);
  const records = (answer.Answer ?? []).filter((r) => r.type === RECORD_TYPES[type]);
  // An A or AAAA record whose data is not an address of its kind: the resolver is not to be trusted.
  const unreadable = records.find((r) => !IS_ADDRESS[type](r.data));
  if (unreadable)
    throw new Error(
      `resolver answered ${type} data that is not an address: ${unreadable.data.slice(0, 100)}`,
    );
  return {
    addresses: records.map((r) => r.data),
    ttl: Math.min(MAX_CACHE_SECONDS, ...records.map((r) => r.TTL)),
    nameError: answer.Status === 3,
  };
}

/** The A and AAAA addresses of `host` according to the resolver at `dohUrl`. */
export async function resolveHost(dohUrl: string, host: string, now = Date.now()): Promise<Resolution> {
  const key = `${dohUrl} ${host}`;
  const cached = cache.get(key);
  if (cached && cached.expiresAt > now) return { ok: true, addresses: cached.addresses };
  let answers: Awaited<ReturnType<typeof query>>[];
  try {
    answers = await Promise.all([query(dohUrl, host, "A"), query(dohUrl, host, "AAAA")]);
  } catch (thrown) {
    return {
      ok: false,
      reason: "resolver_failed",
      detail: thrown instanceof Error ? thrown.message : String(thrown),
    };
  }
  const addresses = answers.flatMap((a) => a.addresses);
  if (addresses.length === 0) {
    const detail = answers.some((a) => a.nameError) ? "no such name" : "no A or AAAA record";
    return { ok: false, reason: "no_address", detail };
  }
  const ttl = Math.min(...answers.filter((a) => a.addresses.length > 0).map((a) => a.ttl));
  if (ttl > 0) cache.set(key, { addresses, expiresAt: now + ttl * 1000 });
  return { ok: true, addresses };
}
