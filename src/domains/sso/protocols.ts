import type { SsoType } from "../../db/schema";
import type { SsoProtocol } from "./protocol";

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
