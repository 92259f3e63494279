// @peculiar/x509 resolves its ASN.1 and crypto services through tsyringe, which needs the Reflect
// metadata API before it loads.
import "reflect-metadata";
import { X509Certificate } from "@peculiar/x509";

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

/**
 * Parses one PEM X.509 certificate. Returns the reason it is unusable instead of throwing: malformed,
 * not yet valid or expired at `nowMs`.
 */
export async function parseCertificate(
  text: string,
  nowMs: number,
): Promise<{ ok: true; info: CertificateInfo } | { ok: false; message: string }> {
  const block = PEM_BLOCK.exec(text);
  if (!block?.[1]) return { ok: false, message: "is not a PEM certificate (-----BEGIN CERTIFICATE-----)" };
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(derBase64ToPem(block[1]));
  } catch {
    return { ok: false, message: "is not a well-formed X.509 certificate" };
  }
  const info = await describe(certificate, nowMs);
  if (certificate.notBefore.getTime() > nowMs)
    return { ok: false, message: `is not valid before ${info.not_before}` };
  if (info.expired) return { ok: false, message: `expired on ${info.not_after}` };
  return { ok: true, info };
}

/** What the answer shows of a stored certificate, `expired` as of `nowMs`. */
export async function certificateInfo(pem: string, nowMs: number): Promise<CertificateInfo> {
  return describe(new X509Certificate(pem), nowMs);
}

async function describe(certificate: X509Certificate, nowMs: number): Promise<CertificateInfo> {
  const thumbprint = new Uint8Array(await certificate.getThumbprint("SHA-256"));
  return {
    pem: certificate.toString("pem"),
    subject: certificate.subject,
    issuer: certificate.issuer,
    not_before: isoSecond(certificate.notBefore),
    not_after: isoSecond(certificate.notAfter),
    fingerprint_sha256: [...thumbprint].map((b) => b.toString(16).padStart(2, "0")).join(":"),
    expired: certificate.notAfter.getTime() <= nowMs,
  };
}
