import { ApiError } from "../../../platform/errors";
import type { ServiceContext } from "../../../platform/service/context";
import { serviceProvider } from "../../institutions/sso/present";
import type { SsoConnection } from "../../institutions/sso/service";
import type { StartedRequest } from "../pending";
import { redirectBindingUrl } from "./authn-request";

/**
 * SP-initiated SAML, once the pending request is stored (its nonce is our AuthnRequest's ID, which
 * the Response's `InResponseTo` must name): the browser sent to the IdP's single sign-on URL with
 * the request (HTTP-Redirect binding) and the pending request's state as `RelayState`.
 */
export async function beginSaml(
  ctx: ServiceContext,
  // protocols.ts's BeginInput and Begun, by shape: protocols.ts loads this module, not the reverse.
  input: { institutionId: string; connection: SsoConnection; request: StartedRequest; origin: string },
): Promise<{ location: string; cookie: string }> {
  const saml = input.connection.saml;
  // An active connection is complete (the settings refuse `active` otherwise); this guards old rows.
  if (!saml?.sso_url)
    throw new ApiError("sso_not_configured", "The institution's SAML settings have no single sign-on URL.");
  // The pending request's nonce is the AuthnRequest's ID (protocols.ts's PENDING_SHAPES).
  const { nonce: id, state, cookie } = input.request;
  const sp = serviceProvider(input.origin, input.institutionId);
  const location = await redirectBindingUrl({
    id,
    nowMs: ctx.now(),
    destination: saml.sso_url,
    acsUrl: sp.acs_url,
    spEntityId: sp.entity_id,
    relayState: state,
  });
  return { location, cookie };
}
