// A SAML 2.0 identity provider for the tests: its own RSA key and self-signed X.509 certificate, and
// Responses signed with real XML-DSig by xmldsigjs (the library the product verifies with, used here
// on the other side: RSA-SHA256 or RSA-SHA1, exclusive canonicalisation, enveloped signatures, the
// signature placed after the Issuer as SAML's schema puts it). Also the attacks on a signed Response:
// the XSW1–XSW8 signature-wrapping shapes of "On Breaking SAML" (Somorovsky et al., 2012), an unsigned
// assertion beside a signed one, a comment in the NameID.
import { AsnConvert } from "@peculiar/asn1-schema";
import {
  AlgorithmIdentifier,
  AttributeTypeAndValue,
  AttributeValue,
  Certificate,
  Name,
  RelativeDistinguishedName,
  SubjectPublicKeyInfo,
  TBSCertificate,
  Validity,
  Version,
} from "@peculiar/asn1-x509";
import { DOMParser, type Document, type Element, type Node, XMLSerializer } from "@xmldom/xmldom";
import * as xmldsig from "xmldsigjs";
import { loadXmlDsig } from "../../src/domains/sso/saml/xml";

export const PROTOCOL = "urn:oasis:names:tc:SAML:2.0:protocol";
export const ASSERTION = "urn:oasis:names:tc:SAML:2.0:assertion";
export const DSIG = "http://www.w3.org/2000/09/xmldsig#";
const EXC_C14N = "http://www.w3.org/2001/10/xml-exc-c14n#";
const DAY = 86_400_000;

export type Hash = "SHA-256" | "SHA-1";

export interface SamlIdp {
  entityId: string;
  certificatePem: string;
  /** The certificate's DER, base64, as metadata and KeyInfo carry it. */
  certificateBase64: string;
  privateKey: CryptoKey;
}

function base64(bytes: ArrayBuffer | Uint8Array): string {
  return btoa(String.fromCharCode(...new Uint8Array(bytes)));
}

/** WebCrypto's ECDSA signature (r || s) as X.509 carries it: SEQUENCE { INTEGER r, INTEGER s }. */
function derEcdsaSignature(raw: ArrayBuffer): ArrayBuffer {
  const integer = (bytes: Uint8Array) => {
    let start = 0;
    while (start < bytes.length - 1 && bytes[start] === 0) start++;
    const body = [...bytes.slice(start)];
    if ((body[0] ?? 0) & 0x80) body.unshift(0);
    return [0x02, body.length, ...body];
  };
  const half = raw.byteLength / 2;
  const body = [...integer(new Uint8Array(raw, 0, half)), ...integer(new Uint8Array(raw, half))];
  return new Uint8Array([0x30, body.length, ...body]).buffer;
}

/**
 * A fresh IdP: a key pair (RSA 2048 unless `ECDSA` P-256 is asked for) and a self-signed certificate
 * valid from yesterday for a year.
 */
export async function createSamlIdp(
  entityId = `https://idp.${crypto.randomUUID()}.test/saml`,
  keyType: "RSA" | "ECDSA" = "RSA",
): Promise<SamlIdp> {
  const keys = (await crypto.subtle.generateKey(
    keyType === "RSA"
      ? {
          name: "RSASSA-PKCS1-v1_5",
          modulusLength: 2048,
          publicExponent: new Uint8Array([1, 0, 1]),
          hash: "SHA-256",
        }
      : { name: "ECDSA", namedCurve: "P-256" },
    true,
    ["sign", "verify"],
  )) as CryptoKeyPair;
  const spki = (await crypto.subtle.exportKey("spki", keys.publicKey)) as ArrayBuffer;
  const subject = new Name([
    new RelativeDistinguishedName([
      new AttributeTypeAndValue({
        type: "2.5.4.3",
        value: new AttributeValue({ utf8String: new URL(entityId).hostname }),
      }),
    ]),
  ]);
  // sha256WithRSAEncryption (parameters NULL) or ecdsa-with-SHA256 (no parameters).
  const algorithm = () =>
    keyType === "RSA"
      ? new AlgorithmIdentifier({ algorithm: "1.2.840.113549.1.1.11", parameters: null })
      : new AlgorithmIdentifier({ algorithm: "1.2.840.10045.4.3.2" });
  const serialNumber = crypto.getRandomValues(new Uint8Array(8));
  serialNumber[0] = ((serialNumber[0] ?? 0) & 0x7f) | 0x01;
  const now = Date.now();
  const tbsCertificate = new TBSCertificate({
    version: Version.v3,
    serialNumber: serialNumber.buffer,
    signature: algorithm(),
    issuer: subject,
    subject,
    validity: new Validity({ notBefore: new Date(now - DAY), notAfter: new Date(now + 365 * DAY) }),
    subjectPublicKeyInfo: AsnConvert.parse(spki, SubjectPublicKeyInfo),
  });
  const tbs = AsnConvert.serialize(tbsCertificate);
  const signature =
    keyType === "RSA"
      ? await crypto.subtle.sign("RSASSA-PKCS1-v1_5", keys.privateKey, tbs)
      : derEcdsaSignature(await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, keys.privateKey, tbs));
  const der = AsnConvert.serialize(
    new Certificate({ tbsCertificate, signatureAlgorithm: algorithm(), signatureValue: signature }),
  );
  const certificateBase64 = base64(der);
  const certificatePem = `-----BEGIN CERTIFICATE-----\n${(certificateBase64.match(/.{1,64}/g) ?? []).join("\n")}\n-----END CERTIFICATE-----`;
  return { entityId, certificatePem, certificateBase64, privateKey: keys.privateKey };
}

export interface ResponseOptions {
  /** Our ACS URL: the Response's Destination and the SubjectConfirmationData's Recipient. */
  acsUrl: string;
  /** Our entity id: the Audience. */
  audience: string;
  /** The AuthnRequest's ID; left out for an IdP-initiated (unsolicited) Response. */
  inResponseTo?: string;
  nameId: string;
  nameIdFormat?: string;
  attributes?: Record<string, string | string[]>;
  /** The IdP's clock; `Date.now()` when left out. */
  now?: number;
  /** How long the assertion is valid (Conditions and SubjectConfirmationData); 5 minutes. */
  lifetimeMs?: number;
  /** What is signed: the assertion (default, as Okta, Entra and Google do), the Response, both, nothing. */
  sign?: "assertion" | "response" | "both" | "none";
  /** The signature's and the digest's hash; SHA-256 unless a test asks for SHA-1. */
  hash?: Hash;
  digestHash?: Hash;
  assertionId?: string;
  statusCode?: string;
  /** Overrides of single fields, for the tests of each check. */
  issuer?: string;
  destination?: string;
  recipient?: string;
  /** Put in the assertion's Issuer only (the Response's stays `issuer`). */
  assertionIssuer?: string;
}

function xmlText(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function xmlAttribute(value: string): string {
  return xmlText(value).replace(/"/g, "&quot;");
}

export function samlId(): string {
  return `_${crypto.randomUUID().replace(/-/g, "")}`;
}

function instant(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** The Response as an IdP writes it, unsigned. */
export function responseXml(idp: SamlIdp, options: ResponseOptions): string {
  const now = options.now ?? Date.now();
  const lifetime = options.lifetimeMs ?? 5 * 60_000;
  const issuer = options.issuer ?? idp.entityId;
  const inResponseTo = options.inResponseTo ? ` InResponseTo="${xmlAttribute(options.inResponseTo)}"` : "";
  const attributes = Object.entries(options.attributes ?? {})
    .map(
      ([name, values]) =>
        `<saml:Attribute Name="${xmlAttribute(name)}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic">${(Array.isArray(
          values,
        )
          ? values
          : [values]
        )
          .map((value) => `<saml:AttributeValue>${xmlText(value)}</saml:AttributeValue>`)
          .join("")}</saml:Attribute>`,
    )
    .join("");
  return [
    `<samlp:Response xmlns:samlp="${PROTOCOL}" xmlns:saml="${ASSERTION}" ID="${samlId()}" Version="2.0" IssueInstant="${instant(now)}" Destination="${xmlAttribute(options.destination ?? options.acsUrl)}"${inResponseTo}>`,
    `<saml:Issuer>${xmlText(issuer)}</saml:Issuer>`,
    `<samlp:Status><samlp:StatusCode Value="${options.statusCode ?? "urn:oasis:names:tc:SAML:2.0:status:Success"}"/></samlp:Status>`,
    `<saml:Assertion ID="${options.assertionId ?? samlId()}" Version="2.0" IssueInstant="${instant(now)}">`,
    `<saml:Issuer>${xmlText(options.assertionIssuer ?? issuer)}</saml:Issuer>`,
    "<saml:Subject>",
    `<saml:NameID Format="${options.nameIdFormat ?? "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"}">${xmlText(options.nameId)}</saml:NameID>`,
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="${instant(now + lifetime)}" Recipient="${xmlAttribute(options.recipient ?? options.acsUrl)}"${inResponseTo}/></saml:SubjectConfirmation>`,
    "</saml:Subject>",
    `<saml:Conditions NotBefore="${instant(now - 5_000)}" NotOnOrAfter="${instant(now + lifetime)}"><saml:AudienceRestriction><saml:Audience>${xmlText(options.audience)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>`,
    `<saml:AuthnStatement AuthnInstant="${instant(now)}" SessionIndex="${samlId()}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`,
    attributes ? `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>` : "",
    "</saml:Assertion>",
    "</samlp:Response>",
  ].join("");
}

export function parse(xml: string): Document {
  return new DOMParser().parseFromString(xml, "text/xml");
}

export function serialize(node: Node): string {
  return new XMLSerializer().serializeToString(node);
}

function child(parent: Element, namespace: string, localName: string): Element {
  for (let node = parent.firstChild; node; node = node.nextSibling)
    if (
      node.nodeType === 1 &&
      (node as Element).namespaceURI === namespace &&
      (node as Element).localName === localName
    )
      return node as Element;
  throw new Error(`no ${localName} in ${parent.localName}`);
}

/** The document's root element (the Response). */
export function root(doc: Document): Element {
  if (!doc.documentElement) throw new Error("no root element");
  return doc.documentElement;
}

export function assertionOf(doc: Document): Element {
  return child(root(doc), ASSERTION, "Assertion");
}

/** Signs `element` (enveloped, exclusive c14n) and puts the Signature right after its Issuer. */
export async function signElement(
  idp: SamlIdp,
  element: Element,
  hash: Hash = "SHA-256",
  digestHash: Hash = hash,
): Promise<void> {
  await loadXmlDsig();
  const signed = new xmldsig.SignedXml();
  signed.XmlSignature.SignedInfo.CanonicalizationMethod.Algorithm = EXC_C14N;
  const ecdsa = idp.privateKey.algorithm.name === "ECDSA";
  const key =
    hash === "SHA-256" || ecdsa
      ? idp.privateKey
      : await crypto.subtle.importKey(
          "pkcs8",
          await crypto.subtle.exportKey("pkcs8", idp.privateKey),
          { name: "RSASSA-PKCS1-v1_5", hash },
          false,
          ["sign"],
        );
  const algorithm = ecdsa ? { name: "ECDSA", hash } : { name: "RSASSA-PKCS1-v1_5" };
  const signature = await signed.Sign(algorithm as never, key, element, {
    x509: [idp.certificateBase64],
    references: [
      { uri: `#${element.getAttribute("ID")}`, hash: digestHash, transforms: ["enveloped", "exc-c14n"] },
    ],
  });
  const node = signature.GetXml();
  if (!node) throw new Error("no signature element");
  const imported = (element.ownerDocument as Document).importNode(node as unknown as Node, true);
  const issuer = child(element, ASSERTION, "Issuer");
  element.insertBefore(imported, issuer.nextSibling);
}

/** A Response signed as `options.sign` says (the assertion by default). */
export async function signedResponse(idp: SamlIdp, options: ResponseOptions): Promise<string> {
  const doc = parse(responseXml(idp, options));
  const sign = options.sign ?? "assertion";
  const hash = options.hash ?? "SHA-256";
  const digestHash = options.digestHash ?? hash;
  if (sign === "assertion" || sign === "both") await signElement(idp, assertionOf(doc), hash, digestHash);
  if (sign === "response" || sign === "both") await signElement(idp, root(doc), hash, digestHash);
  return serialize(doc);
}

/** As the HTTP-POST binding carries it: base64 of the UTF-8 XML. */
export function postBinding(xml: string): string {
  const bytes = new TextEncoder().encode(xml);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

// ---- Attacks on a signed Response --------------------------------------------------------------

/** The evil twin of a signed assertion: a new ID, another NameID, no signature. */
function evilAssertion(original: Element, nameId: string): Element {
  const evil = original.cloneNode(true) as Element;
  evil.setAttribute("ID", samlId());
  for (let node = evil.firstChild; node; node = node.nextSibling)
    if (node.nodeType === 1 && (node as Element).localName === "Signature") {
      evil.removeChild(node);
      break;
    }
  const name = evil.getElementsByTagNameNS(ASSERTION, "NameID")[0];
  if (!name) throw new Error("no NameID");
  while (name.firstChild) name.removeChild(name.firstChild);
  name.appendChild((evil.ownerDocument as Document).createTextNode(nameId));
  return evil;
}

function signatureOf(element: Element): Element {
  return child(element, DSIG, "Signature");
}

/**
 * The eight signature-wrapping shapes. XSW1 and XSW2 take a Response whose Response is signed, XSW3–8
 * one whose assertion is signed; each keeps the signed original (so its digest still verifies) and
 * adds an unsigned assertion for `nameId` where a careless reader would take it.
 */
export function wrap(xml: string, shape: number, nameId: string): string {
  const doc = parse(xml);
  const response = root(doc);
  const original = assertionOf(doc);
  switch (shape) {
    case 1: {
      // A new root Response with the evil assertion; the signed original Response inside its Signature.
      const signedResponse = response.cloneNode(true) as Element;
      const signature = signatureOf(response);
      signedResponse.removeChild(signatureOf(signedResponse));
      response.setAttribute("ID", samlId());
      response.replaceChild(evilAssertion(original, nameId), original);
      signature.appendChild(signedResponse);
      break;
    }
    case 2: {
      // As XSW1, but the signed original Response sits before the Signature (a detached signature).
      const signedResponse = response.cloneNode(true) as Element;
      const signature = signatureOf(response);
      signedResponse.removeChild(signatureOf(signedResponse));
      response.setAttribute("ID", samlId());
      response.replaceChild(evilAssertion(original, nameId), original);
      response.insertBefore(signedResponse, signature);
      break;
    }
    case 3:
      // The evil assertion before the signed one, as a sibling.
      response.insertBefore(evilAssertion(original, nameId), original);
      break;
    case 4: {
      // The evil assertion wraps the signed one.
      const evil = evilAssertion(original, nameId);
      response.replaceChild(evil, original);
      evil.appendChild(original);
      break;
    }
    case 5: {
      // The evil assertion carries the (moved) signature; the signed original, unsigned now, at the end.
      const evil = evilAssertion(original, nameId);
      const signature = signatureOf(original);
      original.removeChild(signature);
      evil.insertBefore(signature, child(evil, ASSERTION, "Issuer").nextSibling);
      response.replaceChild(evil, original);
      response.appendChild(original);
      break;
    }
    case 6: {
      // The evil assertion carries the signature, and the signed original inside that signature.
      const evil = evilAssertion(original, nameId);
      const signature = signatureOf(original);
      original.removeChild(signature);
      evil.insertBefore(signature, child(evil, ASSERTION, "Issuer").nextSibling);
      response.replaceChild(evil, original);
      signature.appendChild(original);
      break;
    }
    case 7: {
      // The signed original inside an Extensions element, the evil assertion where it was.
      const extensions = doc.createElementNS(PROTOCOL, "samlp:Extensions");
      const evil = evilAssertion(original, nameId);
      response.replaceChild(evil, original);
      extensions.appendChild(original);
      response.insertBefore(extensions, evil);
      break;
    }
    case 8: {
      // The evil assertion carries the signature, the signed original inside a ds:Object of it.
      const evil = evilAssertion(original, nameId);
      const signature = signatureOf(original);
      original.removeChild(signature);
      response.replaceChild(evil, original);
      const object = doc.createElementNS(DSIG, "ds:Object");
      object.appendChild(original);
      signature.appendChild(object);
      evil.insertBefore(signature, child(evil, ASSERTION, "Issuer").nextSibling);
      break;
    }
    default:
      throw new Error(`no XSW${shape}`);
  }
  return serialize(doc);
}

/** An unsigned assertion for `nameId` beside (after) the signed one. */
export function unsignedBeside(xml: string, nameId: string): string {
  const doc = parse(xml);
  root(doc).appendChild(evilAssertion(assertionOf(doc), nameId));
  return serialize(doc);
}

/**
 * A comment inserted into the signed NameID after signing: `ada@acme.edu.evil.test` becomes
 * `ada@acme.edu<!---->.evil.test`. Exclusive c14n drops comments, so the signature still verifies;
 * a reader of the first text node would see `ada@acme.edu`.
 */
export function commentInNameId(xml: string, at: number): string {
  const doc = parse(xml);
  const name = doc.getElementsByTagNameNS(ASSERTION, "NameID")[0];
  const text = name?.textContent ?? "";
  if (!name) throw new Error("no NameID");
  while (name.firstChild) name.removeChild(name.firstChild);
  name.appendChild(doc.createTextNode(text.slice(0, at)));
  name.appendChild(doc.createComment(""));
  name.appendChild(doc.createTextNode(text.slice(at)));
  return serialize(doc);
}

/** The IdP's metadata, as an administrator would paste it into the SSO settings. */
export function idpMetadata(idp: SamlIdp, ssoUrl: string): string {
  return `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="${DSIG}" entityID="${xmlAttribute(idp.entityId)}"><md:IDPSSODescriptor protocolSupportEnumeration="${PROTOCOL}"><md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${idp.certificateBase64}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor><md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${xmlAttribute(ssoUrl)}"/></md:IDPSSODescriptor></md:EntityDescriptor>`;
}

/** What the IdP reads from our HTTP-Redirect AuthnRequest: the `Location` we sent the browser to. */
export async function readAuthnRequest(location: string) {
  const url = new URL(location);
  const encoded = url.searchParams.get("SAMLRequest");
  if (!encoded) throw new Error(`no SAMLRequest in ${location}`);
  const bytes = Uint8Array.from(atob(encoded), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  const xml = await new Response(stream).text();
  const request = root(parse(xml));
  const issuer = request.getElementsByTagNameNS(ASSERTION, "Issuer")[0];
  return {
    xml,
    localName: request.localName,
    id: request.getAttribute("ID") ?? "",
    destination: request.getAttribute("Destination"),
    acsUrl: request.getAttribute("AssertionConsumerServiceURL"),
    protocolBinding: request.getAttribute("ProtocolBinding"),
    issuer: issuer?.textContent ?? null,
    relayState: url.searchParams.get("RelayState"),
    signed: url.searchParams.has("Signature") || xml.includes(DSIG),
  };
}
