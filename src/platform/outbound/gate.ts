import type { Env } from "../../env";
import { config } from "../config";
import { canonicalHost, classifyAddress, classifyHost, type HostClass, ipLiteral } from "./address";
import { DNS_FAILURES, type DnsFailure } from "./codes";
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
  /** DNS-over-HTTPS resolver (JSON form) to judge what a host name resolves to; null ("off"): text only. */
  dohUrl: string | null;
}

export function outboundPolicy(env: Env): OutboundPolicy {
  return config(env).outbound;
}

/**
 * `problem` completes a 422 message ("must …") and is fit for a customer: a category, never the
 * resolver's words or the addresses it answered (those go to the log).
 */
export type UrlVerdict =
  | { ok: true; url: URL }
  /** Never to be called. */
  | { ok: false; code: "target_refused"; problem: string }
  /** The name did not resolve or the resolver failed (`reason`): it may pass later. */
  | { ok: false; code: "dns"; reason: DnsFailure; problem: string };

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

function log(level: "warn" | "error", message: string, fields: Record<string, unknown>): void {
  console[level](JSON.stringify({ level, message, ...fields }));
}

/**
 * What the resolver says about a host name: null when every address it has is acceptable. What the
 * customer reads is a category; the resolver's detail and the addresses are logged with `ids`.
 */
async function resolvedProblem(
  host: string,
  policy: OutboundPolicy & { dohUrl: string },
  ids: Record<string, unknown>,
): Promise<Exclude<UrlVerdict, { ok: true }> | null> {
  const resolution = await resolveHost(policy.dohUrl, host);
  if (!resolution.ok) {
    const { reason, detail } = resolution;
    if (reason === "resolver_failed")
      log("error", "outbound resolver failed", { code: "dns", reason, host, detail, ...ids });
    else log("warn", "outbound host name did not resolve", { code: "dns", reason, host, detail, ...ids });
    const problem = `must have a host name that resolves (${DNS_FAILURES[reason]})`;
    return { ok: false, code: "dns", reason, problem };
  }
  for (const address of resolution.addresses) {
    const why = admitted(classifyAddress(address), policy);
    if (why) {
      const addresses = resolution.addresses;
      log("warn", "outbound host name refused", { code: "target_refused", host, addresses, why, ...ids });
      return { ok: false, code: "target_refused", problem: `must not resolve to ${why}` };
    }
  }
  return null;
}

/**
 * The whole check: the text, then (unless OUTBOUND_DOH_URL is "off") every address the host name
 * resolves to. At save time refuse `target_refused`; whether to accept a `dns` verdict (a name not
 * published yet) is the caller's choice. Before a request, anything but `ok` means: do not connect.
 * `ids` identify the call in the log lines of a refusal (e.g. `{ webhook_id, delivery_id }`).
 */
export async function checkOutboundUrl(
  env: Env,
  raw: string,
  ids: Record<string, unknown> = {},
): Promise<UrlVerdict> {
  const policy = outboundPolicy(env);
  const problem = urlProblem(raw, policy);
  if (problem) return refuse(problem);
  const url = new URL(raw);
  const host = canonicalHost(url.hostname);
  const dohUrl = policy.dohUrl;
  // Literal addresses were judged above; `localhost` means loopback whatever a resolver says.
  if (dohUrl && ipLiteral(host) === null && classifyHost(host).kind === "public") {
    const resolved = await resolvedProblem(host, { ...policy, dohUrl }, ids);
    if (resolved) return resolved;
  }
  return { ok: true, url };
}
