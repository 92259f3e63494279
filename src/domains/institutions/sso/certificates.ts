// X.509 certificates read with @peculiar/asn1-x509's ASN.1 schema: the subject, issuer, validity and
// fingerprint are all this code needs, so no certificate library (and no global polyfill) is loaded.
import type { Certificate, Name } from "@peculiar/asn1-x509";

export interface CertificateInfo {
  pem: string;
  subject: string;
  issuer: string;
  not_before: string;
  not_after: string;
  fingerprint_sha256: string;
  expired: boolean;
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----\s*([A-Za-z0-9+/=\s]+?)\s*-----END CERTIFICATE-----/;

/** A certificate's base64 DER (as SAML metadata carries it) as PEM, 64 characters a line. */
export function derBase64ToPem(base64: string): string {
  const compact = base64.replace(/\s+/g, "");
  const lines = compact.match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----`;
}

function isoSecond(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

function hex(bytes: Uint8Array, separator = ""): string {
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join(separator);
}

/** The short names of the attribute types a distinguished name shows (others show their OID). */
const ATTRIBUTE_NAMES: Record<string, string> = {
  "2.5.4.3": "CN",
  "2.5.4.7": "L",
  "2.5.4.8": "ST",
  "2.5.4.10": "O",
  "2.5.4.11": "OU",
  "2.5.4.6": "C",
  "0.9.2342.19200300.100.1.25": "DC",
  "1.2.840.113549.1.9.1": "E",
  "2.5.4.42": "G",
  "2.5.4.43": "I",
  "2.5.4.4": "SN",
  "2.5.4.12": "T",
};

/** RFC 4514 escaping of an attribute value; control characters as `\XX`. */
function escapeValue(value: string): string {
  return value
    .replace(/([,+"\\<>;])/g, "\\$1")
    .replace(/^([ #])/, "\\$1")
    .replace(/ $/, "\\ ")
    .replace(/[\r\n\t]/g, (c) => `\\${hex(new TextEncoder().encode(c)).toUpperCase()}`);
}

/** A distinguished name in the order the certificate holds it: `CN=idp.acme.test, O=Acme`. */
function nameToString(name: Name): string {
  return name
    .map((rdn) =>
      rdn
        .map((attribute) => {
          const type = ATTRIBUTE_NAMES[attribute.type] ?? attribute.type;
          const value = attribute.value.anyValue
            ? `#${hex(new Uint8Array(attribute.value.anyValue))}`
            : escapeValue(attribute.value.toString());
          return `${type}=${value}`;
        })
        .join("+"),
    )
    .join(", ");
}

interface ParsedCertificate {
  der: Uint8Array;
  certificate: Certificate;
}

let asn1: Promise<{ parse: (der: Uint8Array) => Certificate }> | undefined;

/**
 * The ASN.1 libraries, loaded on first use: only SSO settings read certificates, and loading them
 * took most of a second of every cold isolate's (and every test file's) start.
 */
function loadAsn1() {
  asn1 ??= Promise.all([import("@peculiar/asn1-schema"), import("@peculiar/asn1-x509")]).then(
    ([schema, x509]) => ({ parse: (der: Uint8Array) => schema.AsnConvert.parse(der, x509.Certificate) }),
  );
  return asn1;
}

/** The DER inside a PEM block, parsed; throws on bad base64 or a structure that is no certificate. */
async function parsePem(pem: string): Promise<ParsedCertificate> {
  const block = PEM_BLOCK.exec(pem);
  if (!block?.[1]) throw new Error("not a PEM certificate");
  const der = Uint8Array.from(atob(block[1].replace(/\s+/g, "")), (c) => c.charCodeAt(0));
  return { der, certificate: (await loadAsn1()).parse(der) };
}

/**
 * Parses one PEM X.509 certificate. Returns the reason it is unusable instead of throwing: malformed,
 * not yet valid or expired at `nowMs`.
 */
export async function parseCertificate(
  text: string,
  nowMs: number,
): Promise<{ ok: true; info: CertificateInfo } | { ok: false; message: string }> {
  if (!PEM_BLOCK.test(text))
    return { ok: false, message: "is not a PEM certificate (-----BEGIN CERTIFICATE-----)" };
  let parsed: ParsedCertificate;
  let info: CertificateInfo;
  try {
    parsed = await parsePem(text);
    info = await describe(parsed, nowMs);
  } catch {
    return { ok: false, message: "is not a well-formed X.509 certificate" };
  }
  if (validity(parsed.certificate).notBefore.getTime() > nowMs)
    return { ok: false, message: `is not valid before ${info.not_before}` };
  if (info.expired) return { ok: false, message: `expired on ${info.not_after}` };
  return { ok: true, info };
}

/** What the answer shows of a stored certificate, `expired` as of `nowMs`. */
export async function certificateInfo(pem: string, nowMs: number): Promise<CertificateInfo> {
  return describe(await parsePem(pem), nowMs);
}

function validity(certificate: Certificate): { notBefore: Date; notAfter: Date } {
  const { notBefore, notAfter } = certificate.tbsCertificate.validity;
  return { notBefore: notBefore.getTime(), notAfter: notAfter.getTime() };
}

async function describe({ der, certificate }: ParsedCertificate, nowMs: number): Promise<CertificateInfo> {
  const { notBefore, notAfter } = validity(certificate);
  const thumbprint = new Uint8Array(await crypto.subtle.digest("SHA-256", der));
  return {
    pem: derBase64ToPem(btoa(String.fromCharCode(...der))),
    subject: nameToString(certificate.tbsCertificate.subject),
    issuer: nameToString(certificate.tbsCertificate.issuer),
    not_before: isoSecond(notBefore),
    not_after: isoSecond(notAfter),
    fingerprint_sha256: hex(thumbprint, ":"),
    expired: notAfter.getTime() <= nowMs,
  };
}
