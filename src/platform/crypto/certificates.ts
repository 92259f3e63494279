// Self-signed X.509 certificates for the keys Lingua signs with (signing-keys.ts): some verifiers take
// a public key only as a certificate (Microsoft Entra ID's "certificate credential" for a client
// assertion). Encoded with @peculiar/asn1-x509's schema (the one the SSO settings parse IdP
// certificates with), signed with WebCrypto; loaded on first use, as they are rarely needed.
import type { Certificate, Name } from "@peculiar/asn1-x509";
import { toBase64Url } from "./encoding";

const SHA256_WITH_RSA = "1.2.840.113549.1.1.11";
const ECDSA_WITH_SHA256 = "1.2.840.10045.4.3.2";
const COMMON_NAME = "2.5.4.3";
const ORGANIZATION = "2.5.4.10";

type Asn1 = [typeof import("@peculiar/asn1-schema"), typeof import("@peculiar/asn1-x509")];
let asn1: Promise<Asn1> | undefined;
function loadAsn1(): Promise<Asn1> {
  asn1 ??= Promise.all([import("@peculiar/asn1-schema"), import("@peculiar/asn1-x509")]);
  return asn1;
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

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** A certificate as JWKs carry it (RFC 7517 4.7, 4.8, 4.9): `x5c` (standard base64 DER) and its thumbprints. */
export interface CertificateFields {
  x5c: [string];
  /** SHA-1 thumbprint of the DER, base64url: what Microsoft Entra ID matches an assertion's `x5t` against. */
  x5t: string;
  "x5t#S256": string;
}

export async function certificateFields(der: Uint8Array): Promise<CertificateFields> {
  const [sha1, sha256] = await Promise.all([
    crypto.subtle.digest("SHA-1", der),
    crypto.subtle.digest("SHA-256", der),
  ]);
  return { x5c: [base64(der)], x5t: toBase64Url(sha1), "x5t#S256": toBase64Url(sha256) };
}

/** PEM (`-----BEGIN CERTIFICATE-----`) of a JWK's `x5c[0]`, lines of 64 characters. */
export function certificatePem(x5c: string): string {
  return `-----BEGIN CERTIFICATE-----\n${(x5c.match(/.{1,64}/g) ?? []).join("\n")}\n-----END CERTIFICATE-----\n`;
}

/**
 * A self-signed v3 certificate of `publicKey` (RSA PKCS#1 v1.5 or ECDSA P-256, SHA-256), signed by
 * its own `privateKey`, for `commonName` (organisation "Lingua"), valid from `notBefore` to `notAfter`.
 * Answers the DER.
 */
export async function selfSignedCertificate(input: {
  alg: "RS256" | "ES256";
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  commonName: string;
  notBefore: Date;
  notAfter: Date;
}): Promise<Uint8Array> {
  const [{ AsnConvert }, x509] = await loadAsn1();
  const rsa = input.alg === "RS256";
  const algorithm = new x509.AlgorithmIdentifier(
    // sha256WithRSAEncryption carries NULL parameters (RFC 4055); ecdsa-with-SHA256 none (RFC 5758).
    rsa ? { algorithm: SHA256_WITH_RSA, parameters: null } : { algorithm: ECDSA_WITH_SHA256 },
  );
  const rdn = (oid: string, value: string) =>
    new x509.RelativeDistinguishedName([
      new x509.AttributeTypeAndValue({ type: oid, value: new x509.AttributeValue({ utf8String: value }) }),
    ]);
  const name: Name = new x509.Name([rdn(ORGANIZATION, "Lingua"), rdn(COMMON_NAME, input.commonName)]);
  const spki = (await crypto.subtle.exportKey("spki", input.publicKey)) as ArrayBuffer;
  // A positive serial number of 16 random bytes.
  const serialNumber = crypto.getRandomValues(new Uint8Array(16));
  serialNumber[0] = ((serialNumber[0] ?? 0) & 0x7f) | 0x01;
  const tbsCertificate = new x509.TBSCertificate({
    version: x509.Version.v3,
    serialNumber: serialNumber.buffer,
    signature: algorithm,
    issuer: name,
    subject: name,
    validity: new x509.Validity({ notBefore: input.notBefore, notAfter: input.notAfter }),
    subjectPublicKeyInfo: AsnConvert.parse(spki, x509.SubjectPublicKeyInfo),
  });
  const tbs = AsnConvert.serialize(tbsCertificate);
  const signature = rsa
    ? await crypto.subtle.sign("RSASSA-PKCS1-v1_5", input.privateKey, tbs)
    : derEcdsaSignature(await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, input.privateKey, tbs));
  const certificate: Certificate = new x509.Certificate({
    tbsCertificate,
    signatureAlgorithm: algorithm,
    signatureValue: signature,
  });
  return new Uint8Array(AsnConvert.serialize(certificate));
}
