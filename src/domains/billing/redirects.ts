import type { FieldError } from "../../platform/errors";

/**
 * Where a checkout or portal session may send the customer back: an absolute URL on one of the
 * deployment's allowed origins (`BILLING_REDIRECT_ORIGINS`, each `scheme://host[:port]` or
 * `scheme://host:*` for any port). https only, unless an allowed origin itself is http (development's
 * loopback origins); never credentials in the URL, never `javascript:`, `data:` or any other scheme.
 * Stripe's `{CHECKOUT_SESSION_ID}` placeholder may stand in a success URL (Stripe fills it in).
 */

export const CHECKOUT_SESSION_PLACEHOLDER = "{CHECKOUT_SESSION_ID}";
const MAX_URL_LENGTH = 2048;

interface OriginRule {
  protocol: string;
  hostname: string;
  /** null: any port. */
  port: string | null;
}

function parseRule(origin: string): OriginRule | null {
  const wildcard = origin.endsWith(":*");
  let url: URL;
  try {
    url = new URL(wildcard ? origin.slice(0, -2) : origin);
  } catch {
    return null;
  }
  return { protocol: url.protocol, hostname: url.hostname, port: wildcard ? null : url.port };
}

/** The rules of the configured origins; entries that are no origin at all are ignored. */
export function redirectRules(origins: readonly string[]): OriginRule[] {
  return origins.map(parseRule).filter((rule): rule is OriginRule => rule !== null);
}

/**
 * Why `value` may not be the redirect `field`, or null when it may. `allowPlaceholder`: the success
 * URL of a checkout, where Stripe replaces `{CHECKOUT_SESSION_ID}`.
 */
export function redirectProblem(
  value: string,
  field: string,
  rules: readonly OriginRule[],
  allowPlaceholder = false,
): FieldError | null {
  const problem = (message: string): FieldError => ({ path: field, message });
  if (value.length > MAX_URL_LENGTH) return problem(`must be at most ${MAX_URL_LENGTH} characters`);
  if (!allowPlaceholder && value.includes(CHECKOUT_SESSION_PLACEHOLDER))
    return problem(`may not contain ${CHECKOUT_SESSION_PLACEHOLDER} (only success_url may)`);
  let url: URL;
  try {
    url = new URL(value.replaceAll(CHECKOUT_SESSION_PLACEHOLDER, "cs_placeholder"));
  } catch {
    return problem("must be an absolute URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return problem("must be an https URL");
  if (url.username || url.password) return problem("may not carry a user name or password");
  const allowed = rules.some(
    (rule) =>
      rule.protocol === url.protocol &&
      rule.hostname === url.hostname &&
      (rule.port === null || rule.port === url.port),
  );
  if (allowed) return null;
  if (url.protocol !== "https:") return problem("must be an https URL");
  return problem(`must be on an allowed origin (${url.origin} is not one)`);
}
