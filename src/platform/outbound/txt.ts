import { z } from "zod";

/**
 * TXT records of a name, asked of the same DNS-over-HTTPS resolver (JSON form) as the gate's A/AAAA
 * lookups (dns.ts), for proofs of control such as SSO domain verification. Never cached: a proof
 * is read as it is published now. A failure comes back as a category whose `detail` a customer may
 * read; what actually went wrong (HTTP status, a malformed answer, the runtime's exception) is only
 * logged.
 */

export type TxtLookup =
  | { ok: true; records: string[] }
  | {
      ok: false;
      /**
       * `no_such_name`: the resolver says the name does not exist (NXDOMAIN). `dns_error`: it answered
       * with another DNS error (SERVFAIL, REFUSED…), usually the domain's own name servers failing.
       * `resolver_unavailable`: the resolver did not give a usable answer (our side).
       */
      reason: "no_such_name" | "dns_error" | "resolver_unavailable";
      detail: string;
    };

const TXT = 16;
const RESOLVER_TIMEOUT_MS = 3_000;

const DohAnswer = z.object({
  Status: z.number().int(),
  Answer: z.array(z.object({ type: z.number().int(), data: z.string() })).optional(),
});

/**
 * A TXT record's text from the JSON form's `data`. Cloudflare answers it as DNS presentation text,
 * one or more quoted character-strings (`"part one" "part two"`, backslash escapes inside), which a
 * long record is split into and which are joined here; Google answers the bare text.
 */
export function txtText(data: string): string {
  const trimmed = data.trim();
  if (!trimmed.startsWith('"')) return trimmed;
  let text = "";
  let index = 0;
  while (index < trimmed.length) {
    if (trimmed[index] !== '"') {
      index += 1;
      continue;
    }
    index += 1;
    while (index < trimmed.length && trimmed[index] !== '"') {
      const char = trimmed[index] as string;
      if (char === "\\" && index + 1 < trimmed.length) {
        const digits = /^\d{3}/.exec(trimmed.slice(index + 1))?.[0];
        if (digits) {
          text += String.fromCharCode(Number(digits));
          index += 4;
          continue;
        }
        text += trimmed[index + 1];
        index += 2;
        continue;
      }
      text += char;
      index += 1;
    }
    index += 1;
  }
  return text;
}

function unavailable(name: string, error: string): TxtLookup {
  console.error(JSON.stringify({ level: "error", message: "TXT lookup failed", name, error }));
  return { ok: false, reason: "resolver_unavailable", detail: "the DNS resolver did not answer usably" };
}

/** The TXT records of `name` according to the resolver at `dohUrl`; an empty list when it has none. */
export async function lookupTxt(dohUrl: string, name: string): Promise<TxtLookup> {
  const url = new URL(dohUrl);
  url.searchParams.set("name", name);
  url.searchParams.set("type", "TXT");
  let body: unknown;
  try {
    const response = await fetch(url, {
      headers: { Accept: "application/dns-json" },
      signal: AbortSignal.timeout(RESOLVER_TIMEOUT_MS),
    });
    if (!response.ok) return unavailable(name, `resolver answered HTTP ${response.status}`);
    body = await response.json();
  } catch (thrown) {
    return unavailable(name, thrown instanceof Error ? thrown.message : String(thrown));
  }
  const answer = DohAnswer.safeParse(body);
  if (!answer.success) return unavailable(name, `malformed answer: ${answer.error.message}`);
  const { Status: status } = answer.data;
  if (status === 3) return { ok: false, reason: "no_such_name", detail: `${name} does not exist in DNS` };
  if (status !== 0) {
    console.error(JSON.stringify({ level: "warn", message: "TXT lookup: DNS error", name, status }));
    return {
      ok: false,
      reason: "dns_error",
      detail: `${name} could not be resolved (its name servers answered with an error)`,
    };
  }
  const records = (answer.data.Answer ?? []).filter((r) => r.type === TXT).map((r) => txtText(r.data));
  return { ok: true, records };
}
