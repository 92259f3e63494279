import { describe, expect, it } from "vitest";
import { parseIdpMetadata } from "../../src/domains/institutions/sso/metadata";

const SIGNING = "MIIBsigning0000";
const ENCRYPTION = "MIIBencryption00";

describe("IdP metadata parsing", () => {
  it("finds the IdP inside EntitiesDescriptor, prefers HTTP-Redirect and ignores encryption keys", async () => {
    const xml = `<EntitiesDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata">
      <EntityDescriptor entityID="https://sp.example/"><SPSSODescriptor/></EntityDescriptor>
      <EntityDescriptor entityID="https://idp.example/">
        <IDPSSODescriptor>
          <KeyDescriptor use="encryption"><KeyInfo xmlns="http://www.w3.org/2000/09/xmldsig#"><X509Data><X509Certificate>${ENCRYPTION}</X509Certificate></X509Data></KeyInfo></KeyDescriptor>
          <KeyDescriptor><KeyInfo xmlns="http://www.w3.org/2000/09/xmldsig#"><X509Data><X509Certificate>${SIGNING}</X509Certificate></X509Data></KeyInfo></KeyDescriptor>
          <SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://idp.example/post"/>
          <SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.example/redirect"/>
        </IDPSSODescriptor>
      </EntityDescriptor>
    </EntitiesDescriptor>`;
    const parsed = await parseIdpMetadata(xml);
    expect(parsed).toEqual({
      idp_entity_id: "https://idp.example/",
      sso_url: "https://idp.example/redirect",
      certificates: [`-----BEGIN CERTIFICATE-----\n${SIGNING}\n-----END CERTIFICATE-----`],
    });
  });

  it("answers null for text that is not XML or has no IdP descriptor", async () => {
    expect(await parseIdpMetadata("not xml <")).toBeNull();
    expect(
      await parseIdpMetadata(`<EntityDescriptor entityID="x"><SPSSODescriptor/></EntityDescriptor>`),
    ).toBeNull();
  });

  it("does not expand entities", async () => {
    const xml = `<!DOCTYPE x [<!ENTITY e "expanded">]><EntityDescriptor entityID="&e;"><IDPSSODescriptor/></EntityDescriptor>`;
    expect((await parseIdpMetadata(xml))?.idp_entity_id).not.toBe("expanded");
  });
});
