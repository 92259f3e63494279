import type { ServiceContext } from "../../platform/service/context";
import type { SsoConnection } from "../institutions/sso/service";
import type { StartedRequest } from "./pending";

/** What a protocol's "begin" gets and answers (the registry is protocols.ts). */
export interface BeginInput {
  institutionId: string;
  connection: SsoConnection;
  /** The pending request stored for this sign-in (its protocol's nonce and verifier: PENDING_SHAPES). */
  request: StartedRequest;
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
