import { z } from "zod";
import { BoundedMap } from "../bounded-map";

/**
 * Host names resolved over DNS-over-HTTPS (the JSON form of Cloudflare's and Google's resolvers:
 * `GET ?name=…&type=A` with `Accept: application/dns-json`), so that the outbound gate can judge the
 * addresses a name points at, not only its text. Answers are cached for their TTL, at most five
 * minutes; a zero TTL is not cached at all.
 */

export type Resolution =
  | { ok: true; addresses: string[] }
  | { ok: false; reason: "no_address" | "resolver_failed"; detail: string };

const MAX_CACHE_SECONDS = 300;
const RESOLVER_TIMEOUT_MS = 3_000;
const RECORD_TYPES = { A: 1, AAAA: 28 } as const;

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
  const answer = DohAnswer.parse(await response.json());
  // 3 is NXDOMAIN: a definite "no such name"; any other non-zero status is the resolver's failure.
  if (answer.Status !== 0 && answer.Status !== 3) throw new Error(`resolver status ${answer.Status}`);
  const records = (answer.Answer ?? []).filter((r) => r.type === RECORD_TYPES[type]);
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
