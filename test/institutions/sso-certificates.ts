// Real X.509 certificates for the SSO tests: self-signed ECDSA P-256 over WebCrypto, encoded with
// @peculiar/asn1-x509 (the schema the product parses them with).
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

const DAY = 86_400_000;

const ECDSA_WITH_SHA256 = "1.2.840.10045.4.3.2";
const ATTRIBUTE_TYPES: Record<string, string> = {
  CN: "2.5.4.3",
  O: "2.5.4.10",
  OU: "2.5.4.11",
  C: "2.5.4.6",
  L: "2.5.4.7",
  E: "1.2.840.113549.1.9.1",
};

/** A distinguished name's attributes, in order: each inner list is one (possibly multi-valued) RDN. */
export type Rdns = [type: string, value: string][][];

/** `CN=idp.acme.test, O=Acme` (no escaping: the tests' simple names need none), or the attributes. */
function name(subject: string | Rdns): Name {
  const rdns: Rdns =
    typeof subject === "string"
      ? subject.split(", ").map((part) => [part.split("=") as [string, string]])
      : subject;
  return new Name(
    rdns.map(
      (rdn) =>
        new RelativeDistinguishedName(
          rdn.map(([type, value]) => {
            const oid = ATTRIBUTE_TYPES[type] ?? type;
            if (!/^\d+(\.\d+)+$/.test(oid)) throw new Error(`unknown attribute type ${type}`);
            return new AttributeTypeAndValue({ type: oid, value: new AttributeValue({ utf8String: value }) });
          }),
        ),
    ),
  );
}

/** One DER INTEGER from big-endian unsigned bytes. */
function derInteger(bytes: Uint8Array): number[] {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const body = [...bytes.slice(start)];
  if ((body[0] ?? 0) & 0x80) body.unshift(0);
  return [0x02, body.length, ...body];
}

/** WebCrypto's ECDSA signature (r || s) as X.509 carries it: SEQUENCE { INTEGER r, INTEGER s }. */
function derEcdsaSignature(raw: ArrayBuffer): ArrayBuffer {
  const half = raw.byteLength / 2;
  const body = [...derInteger(new Uint8Array(raw, 0, half)), ...derInteger(new Uint8Array(raw, half))];
  return new Uint8Array([0x30, body.length, ...body]).buffer;
}

function toPem(der: ArrayBuffer): string {
  const base64 = btoa(String.fromCharCode(...new Uint8Array(der)));
  return `-----BEGIN CERTIFICATE-----\n${(base64.match(/.{1,64}/g) ?? []).join("\n")}\n-----END CERTIFICATE-----`;
}

export async function selfSignedPem(
  subject: string | Rdns,
  notBefore: Date,
  notAfter: Date,
): Promise<{ pem: string; der: ArrayBuffer }> {
  const keys = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
    "sign",
    "verify",
  ])) as CryptoKeyPair;
  const spki = (await crypto.subtle.exportKey("spki", keys.publicKey)) as ArrayBuffer;
  const algorithm = new AlgorithmIdentifier({ algorithm: ECDSA_WITH_SHA256 });
  // A positive serial number of 8 random bytes.
  const serialNumber = crypto.getRandomValues(new Uint8Array(8));
  serialNumber[0] = ((serialNumber[0] ?? 0) & 0x7f) | 0x01;
  const tbsCertificate = new TBSCertificate({
    version: Version.v3,
    serialNumber: serialNumber.buffer,
    signature: algorithm,
    issuer: name(subject),
    subject: name(subject),
    validity: new Validity({ notBefore, notAfter }),
    subjectPublicKeyInfo: AsnConvert.parse(spki, SubjectPublicKeyInfo),
  });
  const tbs = AsnConvert.serialize(tbsCertificate);
  const signature = await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, keys.privateKey, tbs);
  const der = AsnConvert.serialize(
    new Certificate({
      tbsCertificate,
      signatureAlgorithm: algorithm,
      signatureValue: derEcdsaSignature(signature),
    }),
  );
  return { pem: toPem(der), der };
}

export function validCertificate(subject = "CN=idp.acme.test") {
  return selfSignedPem(subject, new Date(Date.now() - DAY), new Date(Date.now() + 365 * DAY));
}

export function expiredCertificate(subject = "CN=old.acme.test") {
  return selfSignedPem(subject, new Date(Date.now() - 730 * DAY), new Date(Date.now() - 365 * DAY));
}

export async function sha256Colons(der: ArrayBuffer): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", der));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join(":");
}

export function base64Der(pem: string): string {
  return pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, "").replace(/\s+/g, "");
}
