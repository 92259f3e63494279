import { ApiError } from "../../platform/errors";
import { SAML_REFUSAL_MEANINGS, SAML_REFUSAL_REASONS } from "./saml/refusals";

/**
 * Why an SSO sign-in was refused: the stable `reason` of the log entry and of the problem. Every
 * protocol's reasons are listed here (the OpenAPI document and docs/sso.md list them from this), so
 * the log reads one vocabulary. SAML adds its reasons to this list.
 */
export const SSO_REFUSAL_REASONS = [
  // The pending request (any protocol)
  "state_missing",
  "state_unknown",
  "state_used",
  "state_expired",
  "browser_binding_missing",
  "browser_binding_mismatch",
  "sso_inactive",
  // The IdP's answer (OIDC)
  "idp_error",
  "code_missing",
  "token_exchange_failed",
  "jwks_unavailable",
  "alg_not_allowed",
  "kid_unknown",
  "signature_invalid",
  "issuer_mismatch",
  "audience_mismatch",
  "azp_mismatch",
  "token_expired",
  "token_not_yet_valid",
  "nonce_mismatch",
  "claim_missing",
  // The IdP's answer (SAML)
  ...SAML_REFUSAL_REASONS,
  // The person (any protocol)
  "email_unverified",
  "email_domain_not_verified",
  "member_of_other_institution",
  "member_suspended",
  "seats_exhausted",
] as const;
export type SsoRefusalReason = (typeof SSO_REFUSAL_REASONS)[number];

/** What each reason means, for the OpenAPI document and the guide. */
export const SSO_REFUSAL_MEANINGS: Record<SsoRefusalReason, string> = {
  state_missing: "the IdP's answer carried no `state` (OIDC) or `RelayState` (SAML)",
  state_unknown: "the `state` is not one Lingua issued for this institution",
  state_used: "the `state` was used already (each sign-in allows one answer)",
  state_expired: "the `state` is older than 10 minutes",
  browser_binding_missing: "the browser did not send back the cookie set when the sign-in began",
  browser_binding_mismatch: "the cookie sent back is not the one set for this sign-in",
  sso_inactive: "the institution's SSO is no longer active, or now uses another protocol",
  idp_error: "the IdP answered with an error (e.g. `access_denied`); `detail` carries its text",
  code_missing: "the IdP's answer carried no authorization code",
  token_exchange_failed: "the IdP's token endpoint refused the code or could not be reached (502)",
  jwks_unavailable: "the IdP's key set could not be fetched (502)",
  alg_not_allowed: "the ID token's `alg` is `none`, HS*, or not in the discovery document's list",
  kid_unknown: "no key of the IdP's key set matches the ID token",
  signature_invalid: "the ID token's signature does not verify",
  issuer_mismatch: "the ID token's `iss` is not the configured issuer",
  audience_mismatch: "the ID token's `aud` does not hold the configured client id",
  azp_mismatch: "the ID token's `azp` is present and not the configured client id",
  token_expired: "the ID token expired (60 s of clock skew allowed)",
  token_not_yet_valid: "the ID token's `iat` is in the future (60 s of clock skew allowed)",
  nonce_mismatch: "the ID token's `nonce` is not the sign-in's",
  claim_missing: "the ID token lacks `sub` or the claim mapped to `email`",
  ...SAML_REFUSAL_MEANINGS,
  email_unverified: "the IdP says the e-mail address is not verified (`email_verified: false`)",
  email_domain_not_verified:
    "the e-mail address is not at one of the institution's verified domains, and no member is linked to this IdP subject",
  member_of_other_institution: "the e-mail address belongs to an account outside this institution",
  member_suspended: "the member is suspended in Lingua",
  seats_exhausted: "a new member needs a seat and every seat is taken",
};

export class SsoRefusal extends Error {
  constructor(
    readonly reason: SsoRefusalReason,
    detail: string,
    /** The IdP failed us (its token endpoint, its key set): 502 rather than 400. */
    readonly upstream = false,
    /** What is known of the person when refused, for the log. */
    readonly person: { subject?: string | null; email?: string | null; userId?: string | null } = {},
  ) {
    super(detail);
  }
}

/** No active SSO for an address or slug: the one answer for unknown and inactive alike. */
export function notConfigured(): ApiError {
  return new ApiError(
    "sso_not_configured",
    "No institution signs this address in through single sign-on; sign in with a password.",
  );
}
