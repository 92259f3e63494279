// Reading the parsed Response: the DOM helpers every check uses, and the structure that every
// signature-wrapping attack breaks (docs/design/saml.md).
import type { Document, Element, Node } from "@xmldom/xmldom";
import { SamlRefused } from "./refused";
import type { XmlLibraries } from "./xml";

export const SAML_PROTOCOL = "urn:oasis:names:tc:SAML:2.0:protocol";
export const SAML_ASSERTION = "urn:oasis:names:tc:SAML:2.0:assertion";
export const DSIG = "http://www.w3.org/2000/09/xmldsig#";

export function isElement(node: Node | null): node is Element {
  return node !== null && node.nodeType === 1;
}

export function children(parent: Element, namespace?: string, localName?: string): Element[] {
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

export function onlyChild(parent: Element, namespace: string, localName: string): Element | null {
  const found = children(parent, namespace, localName);
  if (found.length > 1)
    throw new SamlRefused("saml_malformed", `${parent.localName} has ${found.length} ${localName} elements.`);
  return found[0] ?? null;
}

export function required(parent: Element, namespace: string, localName: string): Element {
  const found = onlyChild(parent, namespace, localName);
  if (!found) throw new SamlRefused("saml_malformed", `${parent.localName} has no ${localName}.`);
  return found;
}

export function descendants(root: Element, namespace: string, localName: string): Element[] {
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
export function textValue(element: Element): string {
  let text = "";
  for (let node = element.firstChild; node; node = node.nextSibling) {
    if (node.nodeType === 3 || node.nodeType === 4) text += node.nodeValue ?? "";
    else if (node.nodeType === 8)
      throw new SamlRefused("saml_comment_in_value", `${element.localName} holds an XML comment.`);
    else throw new SamlRefused("saml_malformed", `${element.localName} holds markup where a value belongs.`);
  }
  return text.trim();
}

export function parseInstant(element: Element, name: string): number | null {
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

export function parse(xmldom: XmlLibraries["xmldom"], xml: string): Document {
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

export interface Structure {
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
export function structure(doc: Document): Structure {
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
