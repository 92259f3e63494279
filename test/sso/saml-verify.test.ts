// The SAML Response verification (src/domains/sso/saml/verify.ts) against Responses signed with real
// XML-DSig by the test IdP (test/helpers/saml-idp.ts), and against every attack on them.
import { beforeAll, describe, expect, it } from "vitest";
import { newRequestId, redirectBindingUrl } from "../../src/domains/sso/saml/authn-request";
import {
  decodePostBinding,
  type SamlExpectations,
  SamlRefused,
  verifySamlResponse,
} from "../../src/domains/sso/saml/verify";
import {
  commentInNameId,
  createSamlIdp,
  parse,
  postBinding,
  type ResponseOptions,
  readAuthnRequest,
  root,
  type SamlIdp,
  samlId,
  serialize,
  signedResponse,
  unsignedBeside,
  wrap,
} from "../helpers/saml-idp";

const ACS = "https://api.lingua.test/api/auth/sso/saml/ins_acme/acs";
const SP = "https://api.lingua.test/api/institutions/ins_acme/sso/saml/metadata";

let idp: SamlIdp;
let other: SamlIdp;

beforeAll(async () => {
  [idp, other] = await Promise.all([createSamlIdp(), createSamlIdp()]);
});

function expectations(overrides: Partial<SamlExpectations> = {}): SamlExpectations {
  return {
    certificates: [idp.certificatePem],
    idpEntityId: idp.entityId,
    acsUrl: ACS,
    spEntityId: SP,
    requestId: null,
    nowMs: Date.now(),
    ...overrides,
  };
}

function response(overrides: Partial<ResponseOptions> = {}, by = idp): Promise<string> {
  return signedResponse(by, {
    acsUrl: ACS,
    audience: SP,
    nameId: "ada@acme.edu",
    attributes: { email: "ada@acme.edu", name: "Ada Lovelace", groups: ["maths", "staff"] },
    ...overrides,
  });
}

async function refusal(xml: string, overrides: Partial<SamlExpectations> = {}): Promise<SamlRefused> {
  try {
    const read = await verifySamlResponse(xml, expectations(overrides));
    throw new Error(`accepted: ${JSON.stringify(read)}`);
  } catch (error) {
    if (error instanceof SamlRefused) return error;
    throw error;
  }
}

describe("SAML Response verification: what is accepted", () => {
  it("reads the signed assertion of an IdP-initiated Response", async () => {
    const assertionId = samlId();
    const read = await verifySamlResponse(await response({ assertionId }), expectations());
    expect(read).toMatchObject({
      id: assertionId,
      issuer: idp.entityId,
      nameId: "ada@acme.edu",
      nameIdFormat: "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
      signed: "assertion",
      attributes: { email: ["ada@acme.edu"], name: ["Ada Lovelace"], groups: ["maths", "staff"] },
    });
    expect(read.acceptableUntilMs).toBeGreaterThan(Date.now() + 5 * 60_000);
  });

  it("accepts a signed Response, a Response and assertion both signed, and SP-initiated InResponseTo", async () => {
    const requestId = samlId();
    for (const sign of ["response", "both"] as const) {
      const read = await verifySamlResponse(
        await response({ sign, inResponseTo: requestId }),
        expectations({ requestId }),
      );
      expect(read.nameId).toBe("ada@acme.edu");
      expect(read.signed).toBe(sign === "response" ? "response" : "assertion");
    }
  });

  it("accepts any of the configured certificates (a rotation) and 60 s of clock skew either way", async () => {
    const certificates = [other.certificatePem, idp.certificatePem];
    const now = Date.now();
    // The IdP's clock 50 s ahead: its NotBefore (its now − 5 s) is 45 s in our future.
    await expect(
      verifySamlResponse(await response({ now: now + 50_000 }), expectations({ certificates, nowMs: now })),
    ).resolves.toMatchObject({ nameId: "ada@acme.edu" });
    // Expired 30 s ago by the IdP's clock: still inside the 60 s.
    await expect(
      verifySamlResponse(
        await response({ now: now - 90_000, lifetimeMs: 60_000 }),
        expectations({ certificates, nowMs: now }),
      ),
    ).resolves.toMatchObject({ nameId: "ada@acme.edu" });
  });

  it("accepts an ECDSA P-256 signature (ecdsa-sha256) by a configured ECDSA certificate", async () => {
    const ec = await createSamlIdp(idp.entityId, "ECDSA");
    const xml = await response({}, ec);
    expect(xml).toContain("xmldsig-more#ecdsa-sha256");
    const read = await verifySamlResponse(
      xml,
      expectations({ certificates: [idp.certificatePem, ec.certificatePem] }),
    );
    expect(read.nameId).toBe("ada@acme.edu");
    expect((await refusal(xml)).reason).toBe("saml_unknown_certificate");
  });

  it("decodes the HTTP-POST binding and refuses what is not base64 UTF-8", async () => {
    const xml = await response();
    expect(decodePostBinding(postBinding(xml))).toBe(xml);
    expect(() => decodePostBinding("not base64!")).toThrow(SamlRefused);
    expect(() => decodePostBinding(btoa("\xff\xfe"))).toThrow(SamlRefused);
  });
});

describe("SAML Response verification: signature wrapping", () => {
  it.each([1, 2])("refuses XSW%i (the signed Response moved, an evil one in its place)", async (shape) => {
    const signed = await response({ sign: "response" });
    const attack = wrap(signed, shape, "mallory@acme.edu");
    expect(attack).toContain("mallory@acme.edu");
    const refused = await refusal(attack);
    expect(refused.reason).toBe("saml_wrapped");
  });

  it.each([3, 4, 5, 6, 7, 8])(
    "refuses XSW%i (the signed assertion moved, an evil one read)",
    async (shape) => {
      const signed = await response({ sign: "assertion" });
      const attack = wrap(signed, shape, "mallory@acme.edu");
      expect(attack).toContain("mallory@acme.edu");
      const refused = await refusal(attack);
      expect(refused.reason).toBe("saml_wrapped");
    },
  );

  it("refuses an unsigned assertion beside a signed one, whichever comes first", async () => {
    for (const sign of ["assertion", "response"] as const) {
      const after = unsignedBeside(await response({ sign }), "mallory@acme.edu");
      expect((await refusal(after)).reason).toBe("saml_wrapped");
      // The unsigned one first: move the signed one to the end.
      const doc = parse(after);
      const first = root(doc).getElementsByTagNameNS("urn:oasis:names:tc:SAML:2.0:assertion", "Assertion")[0];
      if (!first) throw new Error("no assertion");
      root(doc).appendChild(first);
      expect((await refusal(serialize(doc))).reason).toBe("saml_wrapped");
    }
  });

  it("refuses a signature whose Reference points elsewhere, and a duplicated ID", async () => {
    const requestId = samlId();
    const signed = await response({ sign: "both", inResponseTo: requestId });
    const doc = parse(signed);
    const assertion = root(doc).getElementsByTagNameNS(
      "urn:oasis:names:tc:SAML:2.0:assertion",
      "Assertion",
    )[0];
    const responseId = root(doc).getAttribute("ID");
    assertion?.setAttribute("ID", responseId ?? "");
    expect((await refusal(serialize(doc), { requestId })).reason).toBe("saml_wrapped");
    // Two unsigned elements of the Response sharing an ID, nothing referencing it.
    const twice = (await response()).replace(
      "<samlp:Status>",
      '<samlp:Extensions><x:a xmlns:x="urn:x" ID="_dup"/><x:b xmlns:x="urn:x" ID="_dup"/></samlp:Extensions><samlp:Status>',
    );
    const duplicated = await refusal(twice);
    expect(duplicated).toMatchObject({ reason: "saml_wrapped", detail: "The ID _dup appears twice." });
  });

  it("refuses a Response with no signature at all", async () => {
    const refused = await refusal(await response({ sign: "none" }));
    expect(refused.reason).toBe("saml_unsigned");
  });

  it("refuses a signed assertion changed after signing", async () => {
    const signed = await response();
    const changed = signed.replace("<saml:NameID", '<saml:NameID SPNameQualifier="x"');
    expect((await refusal(changed)).reason).toBe("saml_bad_signature");
    const renamed = signed.replace(/>ada@acme\.edu<\/saml:NameID>/, ">mallory@acme.edu</saml:NameID>");
    expect(renamed).not.toBe(signed);
    expect((await refusal(renamed)).reason).toBe("saml_bad_signature");
  });
});

describe("SAML Response verification: comments, algorithms, keys", () => {
  it("refuses a NameID with a comment in it, instead of reading part of it", async () => {
    // The IdP signed ada@acme.edu.evil.test (a name the attacker registered there).
    const signed = await response({ nameId: "ada@acme.edu.evil.test" });
    const attack = commentInNameId(signed, "ada@acme.edu".length);
    expect(attack).toContain("ada@acme.edu<!---->.evil.test");
    const refused = await refusal(attack);
    expect(refused.reason).toBe("saml_comment_in_value");
  });

  it("refuses SHA-1, as the signature's hash or as the digest's", async () => {
    const sha1 = await refusal(await response({ hash: "SHA-1" }));
    expect(sha1.reason).toBe("saml_algorithm_refused");
    expect(sha1.detail).toContain("rsa-sha1");
    const sha1Digest = await refusal(await response({ hash: "SHA-256", digestHash: "SHA-1" }));
    expect(sha1Digest.reason).toBe("saml_algorithm_refused");
    expect(sha1Digest.detail).toContain("sha1");
  });

  it("refuses a signature by a certificate not in the settings, naming its fingerprint", async () => {
    const refused = await refusal(await response({}, other), { certificates: [idp.certificatePem] });
    expect(refused.reason).toBe("saml_unknown_certificate");
    expect(refused.detail).toMatch(/fingerprint ([0-9a-f]{2}:){31}[0-9a-f]{2}/);
    // The same Response with the trusted certificate swapped into its KeyInfo: still not verified.
    const swapped = (await response({}, other)).replace(other.certificateBase64, idp.certificateBase64);
    expect((await refusal(swapped)).reason).toBe("saml_bad_signature");
  });

  it("refuses a DOCTYPE, malformed XML, an encrypted assertion and another root", async () => {
    const signed = await response();
    expect((await refusal(`<!DOCTYPE r [<!ENTITY x "y">]>${signed}`)).reason).toBe("saml_malformed");
    expect((await refusal(signed.slice(0, -5))).reason).toBe("saml_malformed");
    expect(
      (
        await refusal(
          signed.replace(/<saml:Assertion[\s\S]*<\/saml:Assertion>/, "<saml:EncryptedAssertion/>"),
        )
      ).reason,
    ).toBe("saml_encrypted_assertion");
    expect((await refusal("<x/>")).reason).toBe("saml_malformed");
  });
});

describe("SAML Response verification: the checks of the assertion", () => {
  it("refuses another audience, recipient, destination or issuer", async () => {
    expect((await refusal(await response({ audience: "https://other.example/sp" }))).reason).toBe(
      "saml_wrong_audience",
    );
    expect((await refusal(await response({ recipient: "https://evil.example/acs" }))).reason).toBe(
      "saml_wrong_destination",
    );
    expect((await refusal(await response({ destination: "https://evil.example/acs" }))).reason).toBe(
      "saml_wrong_destination",
    );
    const issuer = await refusal(await response(), { idpEntityId: "https://idp.other.test" });
    expect(issuer.reason).toBe("saml_wrong_issuer");
    expect((await refusal(await response({ assertionIssuer: "https://idp.other.test" }))).reason).toBe(
      "saml_wrong_issuer",
    );
  });

  it("refuses an expired assertion and one not valid yet, beyond the 60 s", async () => {
    const now = Date.now();
    const expired = await refusal(await response({ now: now - 10 * 60_000 }), { nowMs: now });
    expect(expired.reason).toBe("saml_expired");
    const early = await refusal(await response({ now: now + 2 * 60_000 }), { nowMs: now });
    expect(early.reason).toBe("saml_not_yet_valid");
  });

  it("binds InResponseTo: our request's ID when SP-initiated, none when IdP-initiated", async () => {
    const requestId = samlId();
    expect((await refusal(await response({ inResponseTo: samlId() }), { requestId })).reason).toBe(
      "saml_wrong_request",
    );
    expect((await refusal(await response(), { requestId })).reason).toBe("saml_wrong_request");
    expect((await refusal(await response({ inResponseTo: requestId }))).reason).toBe("saml_wrong_request");
  });

  it("refuses an IdP's error status, naming it", async () => {
    const refused = await refusal(
      await response({ statusCode: "urn:oasis:names:tc:SAML:2.0:status:Requester" }),
    );
    expect(refused.reason).toBe("saml_idp_error");
    expect(refused.detail).toContain("Requester");
  });
});

describe("our AuthnRequest (HTTP-Redirect binding)", () => {
  it("is deflated and base64 in SAMLRequest, RelayState beside it, the IdP URL's own query kept", async () => {
    const id = newRequestId();
    expect(id).toMatch(/^_[0-9a-f]{32}$/);
    const location = await redirectBindingUrl({
      id,
      nowMs: Date.parse("2026-11-27T10:00:00Z"),
      destination: "https://idp.acme.test/sso?tenant=acme&x=a%26b",
      acsUrl: ACS,
      spEntityId: SP,
      relayState: "state-123",
    });
    const url = new URL(location);
    expect(url.origin + url.pathname).toBe("https://idp.acme.test/sso");
    expect(url.searchParams.get("tenant")).toBe("acme");
    expect(url.searchParams.get("x")).toBe("a&b");
    const request = await readAuthnRequest(location);
    expect(request).toMatchObject({
      localName: "AuthnRequest",
      id,
      destination: "https://idp.acme.test/sso?tenant=acme&x=a%26b",
      acsUrl: ACS,
      protocolBinding: "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST",
      issuer: SP,
      relayState: "state-123",
      signed: false,
    });
    expect(request.xml).toContain('IssueInstant="2026-11-27T10:00:00Z"');
  });
});
