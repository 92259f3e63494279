import type { Env } from "../../../env";
import { config } from "../../../platform/config";
import { validationError } from "../../../platform/errors";
import { targetUrlProblem } from "../../webhooks/target-url";

/**
 * The one place SSO settings reach out to a customer-supplied URL (OIDC discovery, SAML metadata).
 * The webhook targets' address rules apply before every fetch; plain http only to a loopback host and
 * only where the deployment admits private targets (development, tests). No redirects are followed
 * (a redirect could lead past the address check), the time-out covers the whole answer and the body
 * is read up to a limit.
 */
export const FETCH_TIMEOUT_MS = 5_000;
export const MAX_DOCUMENT_BYTES = 1024 * 1024;

const LOOPBACK_HOST = /^(127(?:\.\d{1,3}){3}|\[::1\]|localhost)$/i;

/** Null when the URL may be fetched (or sent to browsers), otherwise why not. */
export function outboundUrlProblem(env: Env, raw: string): string | null {
  const allowPrivate = config(env).allowPrivateTargets;
  const problem = targetUrlProblem(raw, allowPrivate);
  if (problem) return problem;
  const url = new URL(raw);
  if (url.protocol !== "https:" && !LOOPBACK_HOST.test(url.hostname)) return "must be an https URL";
  return null;
}

async function readLimited(response: Response, limit: number): Promise<string | null> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

/** GETs a document for the settings field `field`; any failure is a 422 naming that field. */
export async function fetchDocument(env: Env, url: string, field: string, accept: string): Promise<string> {
  const fail = (message: string) => validationError([{ path: field, message }]);
  const problem = outboundUrlProblem(env, url);
  if (problem) throw fail(problem);
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { Accept: accept, "User-Agent": "Lingua-SSO/1" },
      redirect: "manual",
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
  } catch (error) {
    const timedOut = error instanceof Error && error.name === "TimeoutError";
    throw fail(
      timedOut ? `${url} did not answer within ${FETCH_TIMEOUT_MS / 1000} s` : `${url} could not be reached`,
    );
  }
  if (response.status !== 200) {
    response.body?.cancel().catch(() => undefined);
    throw fail(`${url} answered HTTP ${response.status}, not 200`);
  }
  const text = await readLimited(response, MAX_DOCUMENT_BYTES).catch(() => undefined);
  if (text === undefined) throw fail(`${url} could not be read`);
  if (text === null) throw fail(`${url} answered more than ${MAX_DOCUMENT_BYTES} bytes`);
  return text;
}
