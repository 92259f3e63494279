import type { SsoType } from "../../db/schema";
import type { PendingShape } from "./pending";
import type { SsoProtocol } from "./protocol";
import { newRequestId } from "./saml/authn-request";

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

/**
 * One entry per protocol: how a sign-in begins. Everything around it is shared — finding the
 * institution (begin.ts), the pending request (pending.ts), the log and the member (complete.ts), the
 * code exchange (session.ts). A protocol's callback verifies the IdP's answer, takes the pending
 * request with `takeRequest`, and ends with `completeSsoSignIn` under `underSignInLog`.
 */
export const PROTOCOLS: Record<SsoType, SsoProtocol> = { oidc, saml };

/**
 * What each protocol's pending request holds besides the state: OIDC a nonce and a PKCE verifier;
 * SAML the AuthnRequest's ID as the nonce (the Response's `InResponseTo` must name it).
 */
export const PENDING_SHAPES: PendingShape = {
  oidc: { pkce: true },
  saml: { pkce: false, nonce: newRequestId },
};
