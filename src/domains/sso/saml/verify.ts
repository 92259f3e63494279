// The verification of a SAML 2.0 Response (HTTP-POST binding) as our ACS receives it. Pure: the
// caller supplies the institution's settings, the pending request and the time; the replay cache is
// the caller's (it needs the database). Each step and why it is there: docs/design/saml.md.
import type { Element } from "@xmldom/xmldom";
import {
  children,
  descendants,
  onlyChild,
  parse,
  parseInstant,
  required,
  SAML_ASSERTION,
  SAML_PROTOCOL,
  structure,
  textValue,
} from "./dom";
import { SamlRefused } from "./refused";
import { verifySignature } from "./signature";
import { loadXmlDsig } from "./xml";

export { SAML_ASSERTION, SAML_PROTOCOL } from "./dom";
export { type SamlRefusal, SamlRefused } from "./refused";

const SUCCESS = "urn:oasis:names:tc:SAML:2.0:status:Success";
const BEARER = "urn:oasis:names:tc:SAML:2.0:cm:bearer";

/** Clock skew allowed between the IdP and us on every time check. */
export const CLOCK_SKEW_MS = 60_000;
/** The largest Response we read (decoded); real ones are a few kilobytes. */
export const MAX_RESPONSE_BYTES = 256 * 1024;

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
