import type { Env } from "../../env";
import { config } from "../config";
import { type SealBinding, unseal } from "./sealing";

/** The purposes of sealed values, named in their additional data. */
export const SEAL_PURPOSES = {
  webhookSecret: "webhook-secret",
  idempotentResponse: "idempotent-response",
  ssoClientSecret: "sso-client-secret",
  ltiPrivateKey: "lti-private-key",
  ssoPrivateKey: "sso-private-key",
  xapiSecret: "xapi-secret",
  outboundAccessToken: "outbound-access-token",
} as const;

/** The binding of an idempotent response: its key's scope and the key (visible ASCII, no spaces). */
export function idempotentResponseBinding(scope: string, key: string): SealBinding {
  return { purpose: SEAL_PURPOSES.idempotentResponse, id: `${scope} ${key}` };
}

/** An institution's OIDC client secret, bound to the institution's SSO connection row. */
export function ssoClientSecretBinding(institutionId: string): SealBinding {
  return { purpose: SEAL_PURPOSES.ssoClientSecret, id: institutionId };
}

export function ltiPrivateKeyBinding(kid: string): SealBinding {
  return { purpose: SEAL_PURPOSES.ltiPrivateKey, id: kid };
}

/** A private key an institution signs its OIDC client assertions with, bound to its `kid`. */
export function ssoPrivateKeyBinding(kid: string): SealBinding {
  return { purpose: SEAL_PURPOSES.ssoPrivateKey, id: kid };
}

/** An xAPI endpoint's Basic password or OAuth 2 client secret, bound to the endpoint's row. */
export function xapiSecretBinding(endpointId: string): SealBinding {
  return { purpose: SEAL_PURPOSES.xapiSecret, id: endpointId };
}

/** A cached OAuth 2 access token (platform/outbound/access-tokens.ts), bound to its holder, scope and credentials' version. */
export function outboundAccessTokenBinding(holder: string, scope: string, version: number): SealBinding {
  return { purpose: SEAL_PURPOSES.outboundAccessToken, id: `${holder} ${scope} ${version}` };
}

export function webhookSecretBinding(webhookId: string): SealBinding {
  return { purpose: SEAL_PURPOSES.webhookSecret, id: webhookId };
}

/** Opens a sealed value of the row `binding` names; a value of another row, purpose or format throws. */
export async function openSealed(env: Env, sealed: string, binding: SealBinding): Promise<string> {
  return unseal(sealed, config(env).encryptionKey, binding);
}
