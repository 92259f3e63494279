// Our AuthnRequest for the HTTP-Redirect binding (SAML 2.0 Bindings, 3.4): raw DEFLATE, base64, in
// the query as `SAMLRequest`, with `RelayState` (the pending request's state). Not signed: see
// docs/design/saml.md.
import { nowIso } from "../../../platform/ids";

function escapeXml(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** A request ID: an XML NCName (letters first), 128 random bits. */
export function newRequestId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `_${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

export interface AuthnRequestInput {
  id: string;
  nowMs: number;
  /** The IdP's single sign-on URL (the settings' `saml.sso_url`). */
  destination: string;
  acsUrl: string;
  spEntityId: string;
}

export function authnRequestXml(input: AuthnRequestInput): string {
  return [
    `<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion"`,
    ` ID="${escapeXml(input.id)}" Version="2.0" IssueInstant="${nowIso(input.nowMs)}"`,
    ` Destination="${escapeXml(input.destination)}" AssertionConsumerServiceURL="${escapeXml(input.acsUrl)}"`,
    ` ProtocolBinding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST">`,
    `<saml:Issuer>${escapeXml(input.spEntityId)}</saml:Issuer>`,
    `<samlp:NameIDPolicy Format="urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified" AllowCreate="true"/>`,
    "</samlp:AuthnRequest>",
  ].join("");
}

async function deflateRaw(text: string): Promise<Uint8Array> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("deflate-raw"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** The IdP's URL with `SAMLRequest` and `RelayState` added to whatever query it already has. */
export async function redirectBindingUrl(input: AuthnRequestInput & { relayState: string }): Promise<string> {
  const url = new URL(input.destination);
  url.searchParams.append("SAMLRequest", base64(await deflateRaw(authnRequestXml(input))));
  url.searchParams.append("RelayState", input.relayState);
  return url.toString();
}
