// The verification of a SAML 2.0 Response (HTTP-POST binding) as our ACS receives it. Pure: the
// caller supplies the institution's settings, the pending request and the time; the replay cache is
// the caller's (it needs the database). Each step and why it is there: docs/design/saml.md.
import type { Document, Element, Node } from "@xmldom/xmldom";
import { BoundedMap } from "../../../platform/bounded-map";
import type { SamlRefusalReason } from "./refusals";
import { loadXmlDsig, type XmlLibraries } from "./xml";

export const SAML_PROTOCOL = "urn:oasis:names:tc:SAML:2.0:protocol";
export const SAML_ASSERTION = "urn:oasis:names:tc:SAML:2.0:assertion";
const DSIG = "http://www.w3.org/2000/09/xmldsig#";
const EXC_C14N = "http://www.w3.org/2001/10/xml-exc-c14n#";
const ENVELOPED = "http://www.w3.org/2000/09/xmldsig#enveloped-signature";
const SUCCESS = "urn:oasis:names:tc:SAML:2.0:status:Success";
const BEARER = "urn:oasis:names:tc:SAML:2.0:cm:bearer";

/** Clock skew allowed between the IdP and us on every time check. */
export const CLOCK_SKEW_MS = 60_000;
/** The largest Response we read (decoded); real ones are a few kilobytes. */
export const MAX_RESPONSE_BYTES = 256 * 1024;

const SIGNATURE_ALGORITHMS = new Set([
  "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
  "http://www.w3.org/2001/04/xmldsig-more#rsa-sha384",
  "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512",
  "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256",
  "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384",
  "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha512",
]);
const DIGEST_ALGORITHMS = new Set([
  "http://www.w3.org/2001/04/xmlenc#sha256",
  "http://www.w3.org/2001/04/xmldsig-more#sha384",
  "http://www.w3.org/2001/04/xmlenc#sha512",
]);

/** Why a Response was refused: the SSO log's reason (./refusals.ts says what each means). */
export type SamlRefusal = Exclude<
  SamlRefusalReason,
  "saml_unsolicited" | "saml_replayed" | "saml_attribute_missing"
>;

/** A refusal: `reason` for the log's filter, `detail` for the administrator reading why. */
export class SamlRefused extends Error {
  constructor(
    readonly reason: SamlRefusal,
    readonly detail: string,
  ) {
    super(detail);
    this.name = "SamlRefused";
  }
}

export interface SamlExpectations {
  /** The institution's configured IdP signing certificates (PEM): the only keys trusted. */
  certificates: readonly string[];
  /** The configured IdP entity id: the Issuer. */
  idpEntityId: string;
  /** Our ACS URL: the Response's Destination and the bearer confirmation's Recipient. */
  acsUrl: string;
  /** Our entity id: an Audience of every AudienceRestriction. */
  spEntityId: string;
  /**
   * The ID of our AuthnRequest that this Response answers (SP-initiated), or null for an IdP-initiated
   * Response, which then must not claim to answer any request.
   */
  requestId: string | null;
  nowMs: number;
}

export interface VerifiedAssertion {
  /** The signed assertion's ID: what the replay cache remembers. */
  id: string;
  issuer: string;
  nameId: string;
  nameIdFormat: string | null;
  sessionIndex: string | null;
  /** Each attribute's values by its Name (and its FriendlyName, when it has one not taken). */
  attributes: Record<string, string[]>;
  /** Until when the assertion would be accepted: its ID must be remembered that long. */
  acceptableUntilMs: number;
  /** Which element the trusted signature covered. */
  signed: "response" | "assertion";
}

/** The POST binding's SAMLResponse: base64 of the UTF-8 XML. */
export function decodePostBinding(value: string): string {
  const compact = value.replace(/\s+/g, "");
  if (
    compact.length === 0 ||
    compact.length > Math.ceil(MAX_RESPONSE_BYTES / 3) * 4 ||
    !/^[A-Za-z0-9+/]+={0,2}$/.test(compact)
  )
    throw new SamlRefused("saml_malformed", "SAMLResponse is not base64 of a Response of at most 256 KiB.");
  let binary: string;
  try {
    binary = atob(compact);
  } catch {
    throw new SamlRefused("saml_malformed", "SAMLResponse is not base64.");
  }
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new SamlRefused("saml_malformed", "SAMLResponse is not UTF-8 XML.");
  }
}

// ---- DOM reading -------------------------------------------------------------------------------

function isElement(node: Node | null): node is Element {
  return node !== null && node.nodeType === 1;
}

function children(parent: Element, namespace?: string, localName?: string): Element[] {
  const found: Element[] = [];
  for (let node = parent.firstChild; node; node = node.nextSibling)
    if (
      isElement(node) &&
      (namespace === undefined || node.namespaceURI === namespace) &&
      (localName === undefined || node.localName === localName)
    )
      found.push(node);
  return found;
}

function onlyChild(parent: Element, namespace: string, localName: string): Element | null {
  const found = children(parent, namespace, localName);
  if (found.length > 1)
    throw new SamlRefused("saml_malformed", `${parent.localName} has ${found.length} ${localName} elements.`);
  return found[0] ?? null;
}

function required(parent: Element, namespace: string, localName: string): Element {
  const found = onlyChild(parent, namespace, localName);
  if (!found) throw new SamlRefused("saml_malformed", `${parent.localName} has no ${localName}.`);
  return found;
}

function descendants(root: Element, namespace: string, localName: string): Element[] {
  const found: Element[] = [];
  const list = root.getElementsByTagNameNS(namespace, localName);
  for (let i = 0; i < list.length; i++) {
    const element = list.item(i);
    if (element) found.push(element);
  }
  const matches = (wanted: string, actual: string | null) => wanted === "*" || wanted === actual;
  if (matches(namespace, root.namespaceURI) && matches(localName, root.localName)) found.unshift(root);
  return found;
}

/**
 * An element's text: its text and CDATA children joined. A comment (or any other node) inside a value
 * we read is refused, never skipped: exclusive c14n leaves comments out of what was signed, so
 * `ada@acme.edu<!---->.evil.test` verifies as the IdP signed `ada@acme.edu.evil.test`, and a reader of
 * the first text node would take `ada@acme.edu`.
 */
function textValue(element: Element): string {
  let text = "";
  for (let node = element.firstChild; node; node = node.nextSibling) {
    if (node.nodeType === 3 || node.nodeType === 4) text += node.nodeValue ?? "";
    else if (node.nodeType === 8)
      throw new SamlRefused("saml_comment_in_value", `${element.localName} holds an XML comment.`);
    else throw new SamlRefused("saml_malformed", `${element.localName} holds markup where a value belongs.`);
  }
  return text.trim();
}

function parseInstant(element: Element, name: string): number | null {
  const value = element.getAttribute(name);
  if (value === null) return null;
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms))
    throw new SamlRefused(
      "saml_malformed",
      `${element.localName}'s ${name} is not a UTC instant ("${value.slice(0, 40)}").`,
    );
  return ms;
}

function parse(xmldom: XmlLibraries["xmldom"], xml: string): Document {
  // No document type: SAML has none, and a DTD is where entity expansion attacks live.
  if (/<!DOCTYPE/i.test(xml)) throw new SamlRefused("saml_malformed", "The Response has a DOCTYPE.");
  let doc: Document;
  try {
    doc = new xmldom.DOMParser({
      onError: (level, message) => {
        if (level !== "warning") throw new Error(message);
      },
    }).parseFromString(xml, "text/xml");
  } catch {
    throw new SamlRefused("saml_malformed", "The SAMLResponse is not well-formed XML.");
  }
  if (!doc.documentElement || doc.doctype)
    throw new SamlRefused("saml_malformed", "The SAMLResponse is not well-formed XML.");
  return doc;
}

// ---- Structure: the one assertion, the signatures where they belong ----------------------------

interface Structure {
  response: Element;
  assertion: Element;
  /** The signatures found in their two allowed places, each with the element it must cover. */
  signatures: { signature: Element; covers: Element; which: "response" | "assertion" }[];
}

/**
 * The shape every signature-wrapping attack breaks: exactly one Assertion in the whole document, a
 * child of the Response; no ID twice; at most one Signature directly in the Response and one directly
 * in the Assertion, and no Signature anywhere else. Checked before any signature, on the parsed
 * document that is then read, so what is verified is what is read.
 */
function structure(doc: Document): Structure {
  const response = doc.documentElement as Element;
  if (response.namespaceURI !== SAML_PROTOCOL || response.localName !== "Response")
    throw new SamlRefused("saml_malformed", "The document is not a SAML 2.0 Response.");
  if (descendants(response, SAML_ASSERTION, "EncryptedAssertion").length > 0)
    throw new SamlRefused(
      "saml_encrypted_assertion",
      "The assertion is encrypted; turn assertion encryption off for Lingua at the IdP (the signature protects it, HTTPS carries it).",
    );
  const assertions = descendants(response, SAML_ASSERTION, "Assertion");
  if (assertions.length === 0) throw new SamlRefused("saml_malformed", "The Response carries no assertion.");
  const assertion = assertions[0] as Element;
  if (assertions.length > 1 || assertion.parentNode !== response)
    throw new SamlRefused(
      "saml_wrapped",
      `The Response carries ${assertions.length} assertions (or one outside its place): only one assertion, directly in the Response, is accepted.`,
    );
  const ids = new Set<string>();
  for (const element of descendants(response, "*", "*")) {
    for (const name of ["ID", "Id", "id"]) {
      const id = element.getAttribute(name);
      if (id === null) continue;
      if (ids.has(id)) throw new SamlRefused("saml_wrapped", `The ID ${id.slice(0, 80)} appears twice.`);
      ids.add(id);
    }
  }
  const signatures: Structure["signatures"] = [];
  for (const signature of descendants(response, DSIG, "Signature")) {
    const parent = signature.parentNode;
    const which = parent === response ? "response" : parent === assertion ? "assertion" : null;
    if (!which || signatures.some((s) => s.which === which))
      throw new SamlRefused(
        "saml_wrapped",
        "A Signature sits outside the Response's and the assertion's own place.",
      );
    signatures.push({ signature, covers: parent as Element, which });
  }
  if (signatures.length === 0)
    throw new SamlRefused(
      "saml_unsigned",
      "Neither the Response nor its assertion is signed; the IdP must sign the assertion or the Response.",
    );
  return { response, assertion, signatures };
}

// ---- Signatures --------------------------------------------------------------------------------

function pemToDer(pem: string): Uint8Array {
  const body = pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, "").replace(/\s+/g, "");
  return Uint8Array.from(atob(body), (c) => c.charCodeAt(0));
}

/**
 * The configured certificates' public keys, imported once per isolate for each signature algorithm:
 * parsing a certificate and importing its key cost more than the signature check itself. Keyed by the
 * PEM text itself (a certificate removed from the settings is simply never asked for again); null: the
 * certificate's key is not of the algorithm's type.
 */
const importedKeys = new BoundedMap<string, Promise<CryptoKey | null>>(256);

function certificateKey(
  xmldsig: XmlLibraries["xmldsig"],
  pem: string,
  algorithm: Parameters<InstanceType<XmlLibraries["xmldsig"]["X509Certificate"]>["exportKey"]>[0],
): Promise<CryptoKey | null> {
  const cacheKey = `${JSON.stringify(algorithm)}\n${pem}`;
  let key = importedKeys.get(cacheKey);
  if (!key) {
    key = (async () => new xmldsig.X509Certificate(pemToDer(pem)).exportKey({ ...algorithm }))().catch(
      () => null,
    );
    importedKeys.set(cacheKey, key);
  }
  return key;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

async function sha256Colons(der: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", der));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join(":");
}

function algorithmName(uri: string | null | undefined): string {
  return uri ? (uri.split("#").pop() ?? uri) : "none";
}

/**
 * One signature, checked against the configured certificates only (a certificate in its KeyInfo is
 * never trusted; it only names, in the refusal, which key the IdP used). Its algorithms must be
 * allowed, its single Reference must point at the element it sits in, with the enveloped-signature
 * and exclusive c14n transforms, before xmldsigjs digests and verifies.
 */
async function verifySignature(
  { xmldsig }: XmlLibraries,
  doc: Document,
  { signature, covers }: Structure["signatures"][number],
  certificates: readonly string[],
): Promise<void> {
  // A fresh SignedXml per attempt: its canonicalisers keep state from one run to the next.
  const load = () => {
    const signed = new xmldsig.SignedXml(doc as never);
    try {
      signed.LoadXml(signature as never);
    } catch {
      throw new SamlRefused("saml_malformed", "The Signature cannot be read (unknown algorithm or shape).");
    }
    // The key is imported for the signature's own algorithm; xmldsigjs must not re-import it.
    (signed as unknown as { Algorithm: unknown }).Algorithm = undefined;
    return signed;
  };
  const signed = load();
  const info = signed.XmlSignature.SignedInfo;
  const method = info.SignatureMethod.Algorithm;
  if (info.CanonicalizationMethod.Algorithm !== EXC_C14N)
    throw new SamlRefused(
      "saml_algorithm_refused",
      `The signature's canonicalisation is ${algorithmName(info.CanonicalizationMethod.Algorithm)}; only exclusive c14n (xml-exc-c14n#) is accepted.`,
    );
  if (!SIGNATURE_ALGORITHMS.has(method))
    throw new SamlRefused(
      "saml_algorithm_refused",
      `The signature algorithm is ${algorithmName(method)}; RSA or ECDSA with SHA-256, SHA-384 or SHA-512 is required (SHA-1 is refused).`,
    );
  const references = [...info.References.GetIterator()];
  const reference = references[0];
  const id = covers.getAttribute("ID");
  if (references.length !== 1 || !reference || !id || reference.Uri !== `#${id}`)
    throw new SamlRefused(
      "saml_wrapped",
      `The signature must reference exactly the ${covers.localName} it sits in (#${(id ?? "").slice(0, 80)}).`,
    );
  if (!DIGEST_ALGORITHMS.has(reference.DigestMethod.Algorithm ?? ""))
    throw new SamlRefused(
      "saml_algorithm_refused",
      `The digest algorithm is ${algorithmName(reference.DigestMethod.Algorithm)}; SHA-256, SHA-384 or SHA-512 is required (SHA-1 is refused).`,
    );
  const transforms = reference.Transforms
    ? [...reference.Transforms.GetIterator()].map((t) => t.Algorithm)
    : [];
  if (transforms.length !== 2 || !transforms.includes(ENVELOPED) || !transforms.includes(EXC_C14N))
    throw new SamlRefused(
      "saml_algorithm_refused",
      "The signature's transforms must be enveloped-signature and exclusive c14n, nothing else.",
    );

  const algorithm = xmldsig.CryptoConfig.CreateSignatureAlgorithm(info.SignatureMethod).algorithm;
  let contentChanged = false;
  for (const pem of certificates) {
    const key = await certificateKey(xmldsig, pem, algorithm);
    // Another key type (an ECDSA certificate for an RSA signature): not this one.
    if (!key) continue;
    try {
      if (await load().Verify(key)) return;
    } catch {
      // A digest that does not match: the signed element was changed after signing.
      contentChanged = true;
      break;
    }
  }
  if (contentChanged)
    throw new SamlRefused(
      "saml_bad_signature",
      `The signed ${covers.localName} was changed after it was signed.`,
    );
  const embedded = children(signature, DSIG, "KeyInfo")
    .flatMap((keyInfo) => children(keyInfo, DSIG, "X509Data"))
    .flatMap((data) => children(data, DSIG, "X509Certificate"));
  for (const element of embedded) {
    let der: Uint8Array;
    try {
      der = pemToDer(element.textContent ?? "");
    } catch {
      continue;
    }
    if (!certificates.some((pem) => sameBytes(pemToDer(pem), der)))
      throw new SamlRefused(
        "saml_unknown_certificate",
        `The Response is signed with a certificate that is not in the SSO settings (SHA-256 fingerprint ${await sha256Colons(der)}); add the IdP's current signing certificate.`,
      );
  }
  throw new SamlRefused(
    "saml_bad_signature",
    "The signature does not verify with any certificate in the SSO settings.",
  );
}

// ---- The assertion's content -------------------------------------------------------------------

function checkIssuer(parent: Element, expected: string, optional: boolean): string | null {
  const issuer = onlyChild(parent, SAML_ASSERTION, "Issuer");
  if (!issuer) {
    if (optional) return null;
    throw new SamlRefused("saml_malformed", `The ${parent.localName} has no Issuer.`);
  }
  const value = textValue(issuer);
  if (value !== expected)
    throw new SamlRefused(
      "saml_wrong_issuer",
      `The ${parent.localName}'s Issuer is "${value.slice(0, 200)}", not the IdP entity id in the SSO settings ("${expected}").`,
    );
  return value;
}

function checkStatus(response: Element): void {
  const status = required(response, SAML_PROTOCOL, "Status");
  const code = required(status, SAML_PROTOCOL, "StatusCode");
  const value = code.getAttribute("Value");
  if (value === SUCCESS) return;
  const second = onlyChild(code, SAML_PROTOCOL, "StatusCode")?.getAttribute("Value");
  const message = onlyChild(status, SAML_PROTOCOL, "StatusMessage");
  const short = (uri: string | null | undefined) => (uri ?? "no status").split(":").pop();
  throw new SamlRefused(
    "saml_idp_error",
    `The IdP did not sign the member in: ${short(value)}${second ? ` / ${short(second)}` : ""}${message ? ` (${textValue(message).slice(0, 200)})` : ""}.`,
  );
}

function checkInResponseTo(value: string | null, expected: string | null, where: string): void {
  if (expected === null) {
    if (value !== null)
      throw new SamlRefused(
        "saml_wrong_request",
        `The ${where} answers a request (InResponseTo ${value.slice(0, 80)}) this sign-in did not make.`,
      );
    return;
  }
  if (value !== expected)
    throw new SamlRefused(
      "saml_wrong_request",
      value === null
        ? `The ${where} has no InResponseTo, but this sign-in started with a request.`
        : `The ${where} answers another request (InResponseTo ${value.slice(0, 80)}).`,
    );
}

/** Conditions: validity window, audience. Returns the end of the window (ms), if it has one. */
function checkConditions(assertion: Element, expect: SamlExpectations): number | null {
  const conditions = onlyChild(assertion, SAML_ASSERTION, "Conditions");
  if (!conditions) throw new SamlRefused("saml_malformed", "The assertion has no Conditions (no audience).");
  const notBefore = parseInstant(conditions, "NotBefore");
  const notOnOrAfter = parseInstant(conditions, "NotOnOrAfter");
  if (notBefore !== null && expect.nowMs + CLOCK_SKEW_MS < notBefore)
    throw new SamlRefused(
      "saml_not_yet_valid",
      `The assertion is valid from ${new Date(notBefore).toISOString()}; check the IdP's clock.`,
    );
  if (notOnOrAfter !== null && expect.nowMs - CLOCK_SKEW_MS >= notOnOrAfter)
    throw new SamlRefused(
      "saml_expired",
      `The assertion expired at ${new Date(notOnOrAfter).toISOString()}.`,
    );
  const restrictions = children(conditions, SAML_ASSERTION, "AudienceRestriction");
  if (restrictions.length === 0)
    throw new SamlRefused(
      "saml_wrong_audience",
      "The assertion names no Audience; it must name our entity id.",
    );
  for (const restriction of restrictions) {
    const audiences = children(restriction, SAML_ASSERTION, "Audience").map(textValue);
    if (!audiences.includes(expect.spEntityId))
      throw new SamlRefused(
        "saml_wrong_audience",
        `The assertion is for ${audiences.map((a) => `"${a.slice(0, 200)}"`).join(", ") || "nobody"}, not for our entity id "${expect.spEntityId}".`,
      );
  }
  return notOnOrAfter;
}

/** The bearer SubjectConfirmation: recipient, window, request. Returns the window's end (ms). */
function checkSubject(assertion: Element, expect: SamlExpectations): { nameId: Element; until: number } {
  const subject = required(assertion, SAML_ASSERTION, "Subject");
  const nameId = required(subject, SAML_ASSERTION, "NameID");
  const bearers = children(subject, SAML_ASSERTION, "SubjectConfirmation").filter(
    (confirmation) => confirmation.getAttribute("Method") === BEARER,
  );
  if (bearers.length === 0)
    throw new SamlRefused("saml_malformed", "The Subject has no bearer SubjectConfirmation.");
  let refusal: SamlRefused | null = null;
  for (const bearer of bearers) {
    try {
      const data = required(bearer, SAML_ASSERTION, "SubjectConfirmationData");
      const recipient = data.getAttribute("Recipient");
      if (recipient !== expect.acsUrl)
        throw new SamlRefused(
          "saml_wrong_destination",
          `The assertion's Recipient is "${(recipient ?? "").slice(0, 300)}", not our ACS URL "${expect.acsUrl}".`,
        );
      const until = parseInstant(data, "NotOnOrAfter");
      if (until === null)
        throw new SamlRefused("saml_malformed", "The SubjectConfirmationData has no NotOnOrAfter.");
      if (expect.nowMs - CLOCK_SKEW_MS >= until)
        throw new SamlRefused(
          "saml_expired",
          `The assertion's confirmation expired at ${new Date(until).toISOString()}.`,
        );
      const notBefore = parseInstant(data, "NotBefore");
      if (notBefore !== null && expect.nowMs + CLOCK_SKEW_MS < notBefore)
        throw new SamlRefused(
          "saml_not_yet_valid",
          `The assertion's confirmation is valid from ${new Date(notBefore).toISOString()}.`,
        );
      checkInResponseTo(data.getAttribute("InResponseTo"), expect.requestId, "assertion");
      return { nameId, until };
    } catch (error) {
      if (!(error instanceof SamlRefused)) throw error;
      refusal ??= error;
    }
  }
  throw refusal as SamlRefused;
}

function attributesOf(assertion: Element): Record<string, string[]> {
  const attributes: Record<string, string[]> = {};
  const friendly: [string, string[]][] = [];
  for (const statement of children(assertion, SAML_ASSERTION, "AttributeStatement"))
    for (const attribute of children(statement, SAML_ASSERTION, "Attribute")) {
      const name = attribute.getAttribute("Name");
      if (!name) continue;
      const values = children(attribute, SAML_ASSERTION, "AttributeValue").map(textValue);
      attributes[name] = [...(attributes[name] ?? []), ...values];
      const friendlyName = attribute.getAttribute("FriendlyName");
      if (friendlyName) friendly.push([friendlyName, values]);
    }
  for (const [name, values] of friendly) if (!(name in attributes)) attributes[name] = values;
  return attributes;
}

/**
 * The request a Response claims to answer, unverified: the Response's `InResponseTo`, else its
 * bearer confirmation's; null for an IdP-initiated Response. Only picks what the Response is then
 * verified against (`requestId`); never trusted on its own.
 */
export async function inResponseToOf(xml: string): Promise<string | null> {
  const { xmldom } = await loadXmlDsig();
  const response = parse(xmldom, xml).documentElement as Element;
  const own = response.getAttribute("InResponseTo");
  if (own) return own;
  for (const data of descendants(response, SAML_ASSERTION, "SubjectConfirmationData")) {
    const value = data.getAttribute("InResponseTo");
    if (value) return value;
  }
  return null;
}

/**
 * Verifies a Response against the institution's settings and the pending request, and reads its one
 * signed assertion. Throws `SamlRefused` with the reason; never returns anything from an element a
 * trusted signature does not cover.
 */
export async function verifySamlResponse(xml: string, expect: SamlExpectations): Promise<VerifiedAssertion> {
  if (new TextEncoder().encode(xml).length > MAX_RESPONSE_BYTES)
    throw new SamlRefused("saml_malformed", "The Response is larger than 256 KiB.");
  const libraries = await loadXmlDsig();
  const doc = parse(libraries.xmldom, xml);
  const { response, assertion, signatures } = structure(doc);

  for (const signature of signatures) await verifySignature(libraries, doc, signature, expect.certificates);
  // Everything read from here on is inside a verified signature: the Response (covering the
  // assertion) or the assertion itself; the Response's own fields are read only when it is signed,
  // or checked against what we expect (never taken from it).
  const signedResponse = signatures.some((s) => s.which === "response");

  checkStatus(response);
  checkIssuer(response, expect.idpEntityId, true);
  const destination = response.getAttribute("Destination");
  if (destination !== null && destination !== expect.acsUrl)
    throw new SamlRefused(
      "saml_wrong_destination",
      `The Response's Destination is "${destination.slice(0, 300)}", not our ACS URL "${expect.acsUrl}".`,
    );
  if (signedResponse && destination === null)
    throw new SamlRefused("saml_wrong_destination", "The signed Response has no Destination.");
  checkInResponseTo(response.getAttribute("InResponseTo"), expect.requestId, "Response");

  const id = assertion.getAttribute("ID");
  if (!id) throw new SamlRefused("saml_malformed", "The assertion has no ID.");
  const issuer = checkIssuer(assertion, expect.idpEntityId, false) as string;
  const conditionsUntil = checkConditions(assertion, expect);
  const { nameId, until: confirmationUntil } = checkSubject(assertion, expect);
  const subject = textValue(nameId);
  if (!subject) throw new SamlRefused("saml_malformed", "The NameID is empty.");
  const authn = children(assertion, SAML_ASSERTION, "AuthnStatement")[0];
  const attributes = attributesOf(assertion);
  return {
    id,
    issuer,
    nameId: subject,
    nameIdFormat: nameId.getAttribute("Format"),
    sessionIndex: authn?.getAttribute("SessionIndex") ?? null,
    attributes,
    acceptableUntilMs: Math.min(conditionsUntil ?? confirmationUntil, confirmationUntil) + CLOCK_SKEW_MS,
    signed: signedResponse && !signatures.some((s) => s.which === "assertion") ? "response" : "assertion",
  };
}
