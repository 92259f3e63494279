import type { Env } from "../../env";
import { DNS_FAILURES, type OutboundErrorCode } from "./codes";
import { checkOutboundUrl } from "./gate";

/**
 * The only way to call a customer-supplied URL: the gate is checked before every request, redirects
 * are never followed, one time-out covers the check, the connection and the answer, and only the
 * first KiB of the answer is read. Failures come back as a category (`errorCode`) and a sentence a
 * customer may read (`error`); the runtime's own exception text goes to the log only.
 */

/** What a log keeps of a receiver's answer. */
export const RESPONSE_PREFIX_BYTES = 1024;

export interface OutboundOptions {
  timeoutMs: number;
  /** Bytes of the answer to keep in `bodyPrefix` (default 1 KiB). */
  bodyLimit?: number;
  /** Ids that identify the call in the log (e.g. `{ webhook_id, delivery_id }`). */
  log?: Record<string, unknown>;
}

export interface OutboundResult {
  /** A 2xx answer. */
  ok: boolean;
  /** The answer's status; null when none came (refused, time-out, network failure). */
  status: number | null;
  headers: Headers | null;
  /** The first `bodyLimit` bytes of the answer, decoded as UTF-8; null without an answer. */
  bodyPrefix: string | null;
  durationMs: number;
  errorCode: OutboundErrorCode | null;
  error: string | null;
}

/**
 * Past the prefix, an answer is read to its end (and dropped) up to this size: a body read to its end
 * gives its connection back for the next request, a cancelled one closes it. An LRS answers each POST
 * with the ids it stored, about 2 KiB for 50 statements: cancelled after the first KiB, every POST
 * opened a connection of its own (200 for the xAPI burst's 200 POSTs, a TLS handshake each when
 * deployed). A longer answer is still cancelled rather than downloaded.
 */
const DRAIN_BYTES = 64 * 1024;

async function readPrefix(response: Response, limit: number): Promise<string> {
  if (!response.body) return "";
  // Most receivers answer 204 or an empty 200: nothing to read.
  if (response.status === 204 || response.headers.get("Content-Length") === "0") {
    response.body.cancel().catch(() => undefined);
    return "";
  }
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let kept = 0;
  let size = 0;
  let ended = false;
  try {
    while (size < Math.max(limit, DRAIN_BYTES)) {
      const { done, value } = await reader.read();
      if (done) {
        ended = true;
        break;
      }
      if (kept < limit) {
        chunks.push(value);
        kept += value.byteLength;
      }
      size += value.byteLength;
    }
  } finally {
    // The rest is not wanted: stop the download rather than drain it.
    if (!ended) reader.cancel().catch(() => undefined);
  }
  const bytes = new Uint8Array(Math.min(kept, limit));
  let offset = 0;
  for (const chunk of chunks) {
    const take = Math.min(chunk.byteLength, bytes.length - offset);
    bytes.set(chunk.subarray(0, take), offset);
    offset += take;
    if (offset >= bytes.length) break;
  }
  return new TextDecoder().decode(bytes);
}

/** The category of an exception thrown by `fetch`, from the runtime's message. */
export function thrownCategory(message: string): "tls" | "dns" | "connection_failed" {
  if (/\b(tls|ssl|certificate|handshake)\b/i.test(message)) return "tls";
  if (/\b(dns|resolve|getaddrinfo|enotfound|name not resolved|no such host)\b/i.test(message)) return "dns";
  return "connection_failed";
}

const READABLE: Record<OutboundErrorCode, string> = {
  timeout: "Timed out",
  connection_failed: "Could not connect to the receiver",
  tls: "TLS handshake with the receiver failed",
  dns: "The receiver's host name did not resolve",
  redirect: "Redirect not followed",
  http_status: "HTTP",
  target_refused: "Target refused",
};

function statusError(response: Response): Pick<OutboundResult, "errorCode" | "error"> {
  if (response.status >= 200 && response.status < 300) return { errorCode: null, error: null };
  if (response.status >= 300 && response.status < 400) {
    const location = response.headers.get("Location");
    const to = location ? ` to ${location.slice(0, 200)}` : "";
    return { errorCode: "redirect", error: `Redirect (${response.status}${to}) not followed` };
  }
  return { errorCode: "http_status", error: `HTTP ${response.status}` };
}

const sentence = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

function failure(errorCode: OutboundErrorCode, error: string, durationMs: number): OutboundResult {
  return { ok: false, status: null, headers: null, bodyPrefix: null, durationMs, errorCode, error };
}

/**
 * One request to a customer-supplied URL. Never throws for the target's sake: every way it can go
 * wrong is an `OutboundResult` with its `errorCode`.
 */
export async function outboundFetch(
  env: Env,
  url: string,
  init: Pick<RequestInit, "method" | "headers" | "body">,
  options: OutboundOptions,
): Promise<OutboundResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const signal = AbortSignal.timeout(options.timeoutMs);
  const verdict = await checkOutboundUrl(env, url, options.log);
  if (!verdict.ok) {
    // The gate's categories only: what the resolver said is in the log, beside `options.log`.
    if (verdict.code === "dns") return failure("dns", sentence(DNS_FAILURES[verdict.reason]), elapsed());
    return failure(verdict.code, `${READABLE[verdict.code]}: the URL ${verdict.problem}`, elapsed());
  }
  try {
    const response = await fetch(verdict.url, { ...init, redirect: "manual", signal });
    const bodyPrefix = await readPrefix(response, options.bodyLimit ?? RESPONSE_PREFIX_BYTES).catch(
      () => null,
    );
    const ok = response.status >= 200 && response.status < 300;
    return {
      ok,
      status: response.status,
      headers: response.headers,
      bodyPrefix,
      durationMs: elapsed(),
      ...statusError(response),
    };
  } catch (thrown) {
    const message = thrown instanceof Error ? thrown.message : String(thrown);
    if (signal.aborted) return failure("timeout", `Timed out after ${options.timeoutMs} ms`, elapsed());
    const code = thrownCategory(message);
    console.error(
      JSON.stringify({
        level: "error",
        message: "outbound request failed",
        code,
        error: message,
        ...options.log,
      }),
    );
    return failure(code, READABLE[code], elapsed());
  }
}
