import type { Env } from "../../env";
import { config } from "../config";
import { canonicalHost, classifyAddress, classifyHost, type HostClass, ipLiteral } from "./address";
import { resolveHost } from "./dns";

/**
 * The outbound gate: whether a customer-supplied URL may be called. Checked when the URL is saved and
 * again before every request, so a URL saved under an older rule, restored from another database or
 * pointing at a name that now resolves inside is refused at the moment it would be used.
 */

export const MAX_URL_LENGTH = 2048;

export interface OutboundPolicy {
  /** Development only: `http` and the loopback addresses (127.0.0.0/8, ::1, `localhost`). */
  allowLoopback: boolean;
  /** DNS-over-HTTPS resolver (JSON form) to judge what a host name resolves to; null: text only. */
  dohUrl: string | null;
}

export function outboundPolicy(env: Env): OutboundPolicy {
  return config(env).outbound;
}

export type UrlVerdict =
  | { ok: true; url: URL }
  /** `target_refused`: never to be called. `dns`: the name did not resolve (it may later). */
  | { ok: false; code: "target_refused" | "dns"; problem: string };

const refuse = (problem: string): UrlVerdict => ({ ok: false, code: "target_refused", problem });

function admitted(verdict: HostClass, policy: OutboundPolicy): string | null {
  if (verdict.kind === "refused") return verdict.reason;
  if (verdict.kind === "loopback" && !policy.allowLoopback) return "a loopback address";
  return null;
}

/**
 * The URL's text alone: scheme, credentials, fragment, length, and a host that is not internal by
 * its name or literal address. Null when acceptable, else why not (a fragment for a 422: "must …").
 */
export function urlProblem(raw: string, policy: OutboundPolicy): string | null {
  if (raw.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "must be an absolute URL";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    return policy.allowLoopback ? "must be an http or https URL" : "must be an https URL";
  if (url.username || url.password) return "must not contain credentials (user:password@)";
  if (url.hash) return "must not contain a fragment";
  const host = classifyHost(url.hostname);
  const why = admitted(host, policy);
  if (why) return `must not point at ${why}`;
  // Plain http only where nothing leaves the machine: a loopback target in development.
  if (url.protocol === "http:" && host.kind !== "loopback") return "must be an https URL";
  return null;
}

/** What the resolver says about a host name: null when every address it has is acceptable. */
async function resolvedProblem(host: string, policy: OutboundPolicy & { dohUrl: string }) {
  const resolution = await resolveHost(policy.dohUrl, host);
  if (!resolution.ok) {
    const problem = `must have a host name that resolves (${resolution.detail})`;
    return { code: "dns" as const, problem };
  }
  for (const address of resolution.addresses) {
    const why = admitted(classifyAddress(address), policy);
    if (why) return { code: "target_refused" as const, problem: `must not resolve to ${why} (${address})` };
  }
  return null;
}

/**
 * The whole check: the text, then (when OUTBOUND_DOH_URL is set) every address the host name resolves
 * to. At save time refuse `target_refused`; whether to accept a `dns` verdict (a name not published
 * yet) is the caller's choice. Before a request, anything but `ok` means: do not connect.
 */
export async function checkOutboundUrl(env: Env, raw: string): Promise<UrlVerdict> {
  const policy = outboundPolicy(env);
  const problem = urlProblem(raw, policy);
  if (problem) return refuse(problem);
  const url = new URL(raw);
  const host = canonicalHost(url.hostname);
  const dohUrl = policy.dohUrl;
  // Literal addresses were judged above; `localhost` means loopback whatever a resolver says.
  if (dohUrl && ipLiteral(host) === null && classifyHost(host).kind === "public") {
    const resolved = await resolvedProblem(host, { ...policy, dohUrl });
    if (resolved) return { ok: false, ...resolved };
  }
  return { ok: true, url };
}
