import type { SignedRequest } from "./signing";

/** What the delivery log keeps of the receiver's answer. */
export const RESPONSE_BODY_LIMIT = 1024;

export interface AttemptOutcome {
  ok: boolean;
  responseStatus: number | null;
  error: string | null;
  responseBody: string | null;
  durationMs: number;
  /** The receiver's Retry-After header, raw. */
  retryAfter: string | null;
}

async function readPrefix(response: Response, limit: number): Promise<string> {
  if (!response.body) return "";
  // Most receivers answer 204 or an empty 200: nothing to read.
  if (response.status === 204 || response.headers.get("Content-Length") === "0") {
    response.body.cancel().catch(() => undefined);
    return "";
  }
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    // The rest is not wanted: stop the download rather than drain it.
    reader.cancel().catch(() => undefined);
  }
  const bytes = new Uint8Array(Math.min(size, limit));
  let offset = 0;
  for (const chunk of chunks) {
    const take = Math.min(chunk.byteLength, bytes.length - offset);
    bytes.set(chunk.subarray(0, take), offset);
    offset += take;
    if (offset >= bytes.length) break;
  }
  return new TextDecoder().decode(bytes);
}

/**
 * One POST of a signed delivery. A 2xx within the time-out is success; redirects are not followed
 * (a 3xx is a failure, like any other status); the time-out covers the whole answer.
 */
export async function postSigned(
  url: string,
  signed: SignedRequest,
  timeoutMs: number,
): Promise<AttemptOutcome> {
  const started = performance.now();
  const signal = AbortSignal.timeout(timeoutMs);
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: signed.headers,
      body: signed.body,
      redirect: "manual",
      signal,
    });
    const responseBody = await readPrefix(response, RESPONSE_BODY_LIMIT).catch(() => null);
    const ok = response.status >= 200 && response.status < 300;
    let error: string | null = null;
    if (!ok) {
      error =
        response.status >= 300 && response.status < 400
          ? `Redirect (${response.status}${response.headers.get("Location") ? ` to ${response.headers.get("Location")}` : ""}) not followed`
          : `HTTP ${response.status}`;
    }
    return {
      ok,
      responseStatus: response.status,
      error,
      responseBody,
      durationMs: elapsed(),
      retryAfter: response.headers.get("Retry-After"),
    };
  } catch (thrown) {
    const timedOut = signal.aborted;
    return {
      ok: false,
      responseStatus: null,
      error: timedOut
        ? `Timed out after ${timeoutMs} ms`
        : `Network error: ${thrown instanceof Error ? thrown.message : String(thrown)}`,
      responseBody: null,
      durationMs: elapsed(),
      retryAfter: null,
    };
  }
}
