// One XML signature of a Response, checked against the configured certificates only
// (docs/design/saml.md, "Signatures").
import type { Document } from "@xmldom/xmldom";
import { BoundedMap } from "../../../platform/bounded-map";
import { children, DSIG, type Structure } from "./dom";
import { SamlRefused } from "./refused";
import type { XmlLibraries } from "./xml";

const EXC_C14N = "http://www.w3.org/2001/10/xml-exc-c14n#";
const ENVELOPED = "http://www.w3.org/2000/09/xmldsig#enveloped-signature";

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
export async function verifySignature(
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
