import type { Env } from "../../../env";
import { validationError } from "../../../platform/errors";
import { outboundFetch, outboundPolicy, urlProblem } from "../../../platform/outbound";

/**
 * SSO settings' calls to customer-supplied URLs (OIDC discovery, SAML metadata), through the outbound
 * gate: its address rules are checked when a URL is saved and again before the request, redirects are
 * never followed, and one time-out covers the whole answer. Documents are read up to a limit.
 */
export const FETCH_TIMEOUT_MS = 5_000;
export const MAX_DOCUMENT_BYTES = 1024 * 1024;

/** Null when the URL may be saved (and later fetched or sent to browsers), otherwise why not. */
export function outboundUrlProblem(env: Env, raw: string): string | null {
  return urlProblem(raw, outboundPolicy(env));
}

/** GETs a document for the settings field `field`; any failure is a 422 naming that field. */
export async function fetchDocument(env: Env, url: string, field: string, accept: string): Promise<string> {
  const fail = (message: string) => validationError([{ path: field, message }]);
  const problem = outboundUrlProblem(env, url);
  if (problem) throw fail(problem);
  const result = await outboundFetch(
    env,
    url,
    { method: "GET", headers: { Accept: accept, "User-Agent": "Lingua-SSO/1" } },
    { timeoutMs: FETCH_TIMEOUT_MS, bodyLimit: MAX_DOCUMENT_BYTES + 1, log: { sso_field: field } },
  );
  if (result.status !== 200 || result.bodyPrefix === null) {
    const why =
      result.status !== null
        ? `answered HTTP ${result.status}, not 200`
        : `could not be fetched (${result.error})`;
    throw fail(`${url} ${why}`);
  }
  if (new TextEncoder().encode(result.bodyPrefix).byteLength > MAX_DOCUMENT_BYTES)
    throw fail(`${url} answered more than ${MAX_DOCUMENT_BYTES} bytes`);
  return result.bodyPrefix;
}
