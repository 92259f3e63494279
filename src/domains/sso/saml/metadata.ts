import { serviceProvider } from "../../institutions/sso/present";

/** The NameID formats we take, in our order of preference: an e-mail, else a stable id. */
export const NAME_ID_FORMATS = [
  "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
  "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent",
  "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified",
] as const;

function attribute(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/"/g, "&quot;");
}

/**
 * Our SP metadata for one institution: entity id, the ACS (HTTP-POST binding), NameID formats.
 * `AuthnRequestsSigned="false"`: our AuthnRequests are not signed (docs/design/saml.md says why);
 * `WantAssertionsSigned="true"`: what we ask IdPs to sign (a signed Response is accepted too).
 */
export function spMetadataXml(origin: string, institutionId: string): string {
  const sp = serviceProvider(origin, institutionId);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="${attribute(sp.entity_id)}">`,
    '  <md:SPSSODescriptor AuthnRequestsSigned="false" WantAssertionsSigned="true" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">',
    ...NAME_ID_FORMATS.map((format) => `    <md:NameIDFormat>${format}</md:NameIDFormat>`),
    `    <md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${attribute(sp.acs_url)}" index="0" isDefault="true"/>`,
    "  </md:SPSSODescriptor>",
    "</md:EntityDescriptor>",
    "",
  ].join("\n");
}
