import {
  createLocalJWKSet,
  decodeProtectedHeader,
  type JSONWebKeySet,
  type JWTPayload,
  errors as joseErrors,
  jwtVerify,
} from "jose";
import type { OidcSettings } from "../../../db/schema";
import { ssoClientSecretBinding } from "../../../platform/crypto/sealed-values";
import { unseal } from "../../../platform/crypto/sealing";
import type { ServiceContext } from "../../../platform/service/context";
import { effectiveAuthMethod } from "../../institutions/sso/oidc";
import { redirectUri } from "../../institutions/sso/present";
import { completeSsoSignIn, type SignedIn, type SsoIdentity, underSignInLog } from "../complete";
import { activeFrom, connectionReads } from "../connection";
import { takeRequest } from "../pending";
import { SsoRefusal } from "../refusal";
import { clientAssertionForm } from "./client-keys";
import { IdpUnavailable, postTokenRequest, providerKeys } from "./idp-calls";

/** Seconds of clock difference accepted on `exp` and `iat`. */
const CLOCK_SKEW_SECONDS = 60;

/** Asymmetric JWS algorithms an ID token may use; `none` and the HMAC family (HS*) never. */
const ASYMMETRIC = /^(RS|PS|ES)(256|384|512)$|^EdDSA$|^Ed25519$/;

/** The provider's answer at our redirect URI (`response_mode=query`). */
export interface OidcCallbackQuery {
  state?: string;
  code?: string;
  /** RFC 9207: the issuer of the answer, when the provider names it. */
  iss?: string;
  error?: string;
  error_description?: string;
}

/**
 * A verifier per cached key set (idp-calls.ts answers the same object until it fetches again): jose's
 * local key set imports each key on first use and keeps it, so the provider's key is imported once
 * per isolate and key set, not per sign-in.
 */
const verifiers = new WeakMap<JSONWebKeySet, ReturnType<typeof createLocalJWKSet>>();
function verifierOf(jwks: JSONWebKeySet) {
  let verifier = verifiers.get(jwks);
  if (!verifier) {
    verifier = createLocalJWKSet(jwks);
    verifiers.set(jwks, verifier);
  }
  return verifier;
}

function allowedAlgorithms(oidc: OidcSettings): string[] {
  const listed = oidc.id_token_signing_alg_values_supported ?? ["RS256"];
  return listed.filter((alg) => ASYMMETRIC.test(alg));
}

/** The client-secret authentication chosen, or the one the discovery document allows, `client_secret_basic` first. */
function clientAuthentication(
  oidc: OidcSettings,
  clientId: string,
  secret: string,
): { form: Record<string, string>; headers: Record<string, string> } {
  if (effectiveAuthMethod(oidc) === "client_secret_post")
    return { form: { client_id: clientId, client_secret: secret }, headers: {} };
  // RFC 6749 2.3.1: each part form-encoded before the base64.
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, "+");
  return {
    form: {},
    headers: { Authorization: `Basic ${btoa(`${encode(clientId)}:${encode(secret)}`)}` },
  };
}

function claimError(error: unknown): SsoRefusal {
  if (error instanceof joseErrors.JWTExpired)
    return new SsoRefusal(
      "token_expired",
      "The ID token expired (60 s of clock skew allowed); sign in again.",
    );
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    if (error.claim === "iss")
      return new SsoRefusal("issuer_mismatch", "The ID token's issuer is not the configured `oidc.issuer`.");
    if (error.claim === "aud")
      return new SsoRefusal(
        "audience_mismatch",
        "The ID token's audience does not hold the configured `oidc.client_id`.",
      );
    if (error.claim === "iat" || error.claim === "nbf")
      return new SsoRefusal(
        "token_not_yet_valid",
        "The ID token was issued in the future (60 s of clock skew allowed); check the identity provider's clock.",
      );
    return new SsoRefusal(
      "claim_missing",
      `The ID token's ${error.claim} claim is not valid (${error.reason}).`,
    );
  }
  if (error instanceof joseErrors.JWKSNoMatchingKey)
    return new SsoRefusal("kid_unknown", "No key of the identity provider's key set matches the ID token.");
  if (error instanceof joseErrors.JWKSMultipleMatchingKeys)
    return new SsoRefusal(
      "kid_unknown",
      "Several keys of the identity provider's key set match the ID token and none verifies it.",
    );
  if (error instanceof joseErrors.JWSSignatureVerificationFailed)
    return new SsoRefusal(
      "signature_invalid",
      "The ID token's signature does not verify with the identity provider's keys.",
    );
  if (error instanceof joseErrors.JOSEAlgNotAllowed)
    return new SsoRefusal(
      "alg_not_allowed",
      "The ID token's algorithm is not one the identity provider announces.",
    );
  return new SsoRefusal(
    "signature_invalid",
    "The ID token could not be verified (it is not a well-formed signed JWT).",
  );
}

/** Reads a claim by name; a dotted name reaches into objects (`custom.role`) when no claim has the name itself. */
export function claim(claims: Record<string, unknown>, name: string): unknown {
  if (name in claims) return claims[name];
  return name
    .split(".")
    .reduce<unknown>(
      (value, part) =>
        value && typeof value === "object" ? (value as Record<string, unknown>)[part] : undefined,
      claims,
    );
}

function stringsOf(value: unknown): string[] | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === "string");
  return null;
}

/** The ID token's claims once every check passed: signature, `alg`, `iss`, `aud`, `azp`, `exp`/`iat`, `nonce`. */
async function verifiedClaims(
  ctx: ServiceContext,
  oidc: OidcSettings,
  idToken: string,
  nonce: string,
): Promise<JWTPayload & Record<string, unknown>> {
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(idToken);
  } catch {
    throw new SsoRefusal("signature_invalid", "The ID token is not a well-formed signed JWT.");
  }
  const algorithms = allowedAlgorithms(oidc);
  if (!header.alg || !algorithms.includes(header.alg))
    throw new SsoRefusal(
      "alg_not_allowed",
      `The ID token is signed with ${JSON.stringify(header.alg ?? null)}; allowed: ${algorithms.join(", ")} (never none or HS*).`,
    );
  if (!oidc.jwks_uri || !oidc.issuer || !oidc.client_id)
    throw new SsoRefusal(
      "sso_inactive",
      "The OIDC settings lack the issuer's key set; save the SSO settings again.",
    );
  let jwks: Awaited<ReturnType<typeof providerKeys>>;
  try {
    jwks = await providerKeys(ctx, oidc.jwks_uri, header.kid);
  } catch (error) {
    if (error instanceof IdpUnavailable) throw new SsoRefusal("jwks_unavailable", error.message, true);
    throw error;
  }
  let payload: JWTPayload & Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(idToken, verifierOf(jwks), {
      issuer: oidc.issuer,
      audience: oidc.client_id,
      algorithms,
      clockTolerance: CLOCK_SKEW_SECONDS,
      currentDate: new Date(ctx.now()),
      requiredClaims: ["exp", "iat", "sub"],
    }));
  } catch (error) {
    throw claimError(error);
  }
  const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  if (payload.azp !== undefined ? payload.azp !== oidc.client_id : audiences.length > 1)
    throw new SsoRefusal(
      "azp_mismatch",
      "The ID token's authorized party (`azp`) is not the configured client id.",
    );
  if (payload.nonce !== nonce)
    throw new SsoRefusal(
      "nonce_mismatch",
      "The ID token's nonce is not this sign-in's (a replayed or foreign token).",
    );
  return payload;
}

/** The person the claims describe, through the connection's `claim_mapping`. */
export function identityFromClaims(oidc: OidcSettings, claims: Record<string, unknown>): SsoIdentity {
  const mapping = oidc.claim_mapping;
  const subject = typeof claims.sub === "string" ? claims.sub : "";
  const email = claim(claims, mapping.email);
  if (!subject || typeof email !== "string" || !/^[^@\s]+@[^@\s]+$/.test(email.trim()) || email.length > 254)
    throw new SsoRefusal(
      "claim_missing",
      `The ID token lacks ${subject ? `an e-mail address in the \`${mapping.email}\` claim` : "`sub`"}; check the scopes and the claim mapping.`,
      false,
      { subject: subject || null },
    );
  const verified = claims.email_verified;
  return {
    subject,
    email,
    emailVerified:
      verified === false || verified === "false"
        ? false
        : verified === true || verified === "true"
          ? true
          : undefined,
    name: mapping.name ? (claim(claims, mapping.name) as string | null | undefined) : null,
    role: mapping.role ? stringsOf(claim(claims, mapping.role)) : null,
    groups: mapping.groups ? stringsOf(claim(claims, mapping.groups)) : null,
  };
}

/**
 * Our `redirect_uri` (`/api/auth/sso/oidc/{institution}/callback`): takes the pending request,
 * exchanges the code at the token endpoint (PKCE verifier, client secret or `private_key_jwt` assertion), verifies the ID token,
 * reads the person through the claim mapping, and ends the sign-in. Every refusal is logged.
 */
export async function oidcCallback(
  ctx: ServiceContext,
  input: {
    institutionId: string;
    query: OidcCallbackQuery;
    origin: string;
    cookie: (state: string) => string | undefined;
  },
): Promise<SignedIn> {
  const { institutionId, query } = input;
  return underSignInLog(ctx, { institutionId, protocol: "oidc" }, async () => {
    const request = await takeRequest(ctx, {
      state: query.state,
      institutionId,
      protocol: "oidc",
      cookie: input.cookie,
      // The settings in the same round trip as the pending request.
      alongside: connectionReads(ctx.db, institutionId),
    });
    if (query.error)
      throw new SsoRefusal(
        "idp_error",
        `The identity provider answered ${query.error.slice(0, 100)}${query.error_description ? `: ${query.error_description.slice(0, 300)}` : ""}.`,
      );
    if (!query.code)
      throw new SsoRefusal("code_missing", "The identity provider's answer carries no authorization code.");
    const active = activeFrom(request.alongside);
    const oidc = active?.connection.type === "oidc" ? active.connection.oidc : null;
    const sealed = active?.connection.clientSecretSealed;
    const privateKeyJwt = oidc?.token_endpoint_auth_method === "private_key_jwt";
    if (!active || !oidc?.token_endpoint || !oidc.client_id || !(sealed || privateKeyJwt))
      throw new SsoRefusal("sso_inactive", "The institution's OIDC sign-in is not active any more.");
    // RFC 9207 (mix-up defence): an answer that names its issuer must name ours.
    if (query.iss !== undefined && query.iss !== oidc.issuer)
      throw new SsoRefusal(
        "issuer_mismatch",
        `The identity provider's answer names the issuer ${query.iss.slice(0, 200)}, not the configured one.`,
      );
    const { client_id: clientId, token_endpoint: tokenEndpoint } = oidc;
    // private_key_jwt: a fresh assertion signed with the institution's key; otherwise the sealed secret.
    const auth =
      !privateKeyJwt && sealed
        ? clientAuthentication(
            oidc,
            clientId,
            await unseal(sealed, ctx.config.encryptionKey, ssoClientSecretBinding(institutionId)),
          )
        : {
            form: await clientAssertionForm(ctx, institutionId, {
              ...oidc,
              client_id: clientId,
              token_endpoint: tokenEndpoint,
            }),
            headers: {},
          };
    const answer = await postTokenRequest(
      ctx,
      oidc.token_endpoint,
      {
        grant_type: "authorization_code",
        code: query.code,
        redirect_uri: redirectUri(input.origin, institutionId),
        code_verifier: request.codeVerifier ?? "",
        ...auth.form,
      },
      auth.headers,
    );
    if (!answer.ok) throw new SsoRefusal("token_exchange_failed", answer.message, answer.upstream);
    const idToken = answer.body.id_token;
    if (typeof idToken !== "string")
      throw new SsoRefusal(
        "token_exchange_failed",
        "The identity provider's token response carries no id_token (is `openid` among the scopes?).",
      );
    const claims = await verifiedClaims(ctx, oidc, idToken, request.nonce);
    return completeSsoSignIn(ctx, {
      institutionId,
      protocol: "oidc",
      identity: identityFromClaims(oidc, claims),
      active,
    });
  });
}
