// Real X.509 certificates for the SSO tests, made with @peculiar/x509 over WebCrypto.
import "reflect-metadata";
import { X509CertificateGenerator } from "@peculiar/x509";

const DAY = 86_400_000;

const algorithm = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;

export async function selfSignedPem(
  subject: string,
  notBefore: Date,
  notAfter: Date,
): Promise<{ pem: string; der: ArrayBuffer }> {
  const keys = (await crypto.subtle.generateKey(algorithm, true, ["sign", "verify"])) as CryptoKeyPair;
  const certificate = await X509CertificateGenerator.createSelfSigned({
    serialNumber: Math.floor(Math.random() * 1e9)
      .toString(16)
      .padStart(8, "0"),
    name: subject,
    notBefore,
    notAfter,
    keys,
    signingAlgorithm: algorithm,
  });
  return { pem: certificate.toString("pem"), der: certificate.rawData };
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
