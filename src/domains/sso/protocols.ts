import type { SsoType } from "../../db/schema";
import { ApiError } from "../../platform/errors";
import type { ServiceContext } from "../../platform/service/context";
import type { SsoConnection } from "../institutions/sso/service";

/**
 * One entry per protocol: how a sign-in begins. Everything around it is shared — finding the
 * institution (begin.ts), the pending request (pending.ts), the log and the member (complete.ts), the
 * code exchange (session.ts). A protocol's callback verifies the IdP's answer, takes the pending
 * request with `takeRequest`, and ends with `completeSsoSignIn` under `underSignInLog`.
 */
export interface BeginInput {
  institutionId: string;
  connection: SsoConnection;
  /** This API's origin, for our callback URLs. */
  origin: string;
  /** The e-mail address the sign-in began with, to pass to the IdP as a hint. */
  loginHint?: string;
}

export interface Begun {
  /** Where to send the browser: the IdP. */
  location: string;
  /** The browser-binding cookie of the pending request (`Set-Cookie`). */
  cookie: string;
}

export interface SsoProtocol {
  begin(ctx: ServiceContext, input: BeginInput): Promise<Begun>;
}

export function notConfigured(): ApiError {
  return new ApiError(
    "sso_not_configured",
    "No institution signs this address in through single sign-on; sign in with a password.",
  );
}

/** SAML 2.0: SP-initiated, an AuthnRequest over the HTTP-Redirect binding (saml/begin.ts). */
const saml: SsoProtocol = {
  async begin(ctx, input) {
    return (await import("./saml/begin")).beginSaml(ctx, input);
  },
};

const oidc: SsoProtocol = {
  async begin(ctx, input) {
    return (await import("./oidc/begin")).beginOidc(ctx, input);
  },
};

export const PROTOCOLS: Record<SsoType, SsoProtocol> = { oidc, saml };
