// The certificate reader behind the SAML settings (src/domains/institutions/sso/certificates.ts):
// how a subject is written, and each reason a certificate is refused.
import { describe, expect, it } from "vitest";
import { certificateInfo, parseCertificate } from "../../src/domains/institutions/sso/certificates";
import { base64Der, selfSignedPem, sha256Colons } from "./sso-certificates";

const DAY = 86_400_000;
const now = Date.now();

describe("SAML certificate parsing", () => {
  it("writes subject and issuer in the certificate's order, RFC 4514 escaped, and the validity to the second", async () => {
    const cert = await selfSignedPem(
      [
        [["CN", "Acme, Inc. #1"]],
        [
          ["O", 'The "Big" One'],
          ["OU", "a+b"],
        ],
        [["L", " leading and trailing "]],
        [["CN", "#hash"]],
        [["E", "admin@acme.test"]],
        [["2.5.4.97", "line\nbreak\ttab"]],
      ],
      new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678)),
      new Date(Date.UTC(2060, 0, 1)),
    );
    const parsed = await parseCertificate(cert.pem, Date.UTC(2026, 5, 1));
    expect(parsed).toEqual({ ok: true, info: expect.any(Object) });
    const subject =
      'CN=Acme\\, Inc. #1, O=The \\"Big\\" One+OU=a\\+b, L=\\ leading and trailing\\ , CN=\\#hash, E=admin@acme.test, 2.5.4.97=line\\0Abreak\\09tab';
    expect(parsed.ok && parsed.info).toEqual({
      pem: cert.pem,
      subject,
      issuer: subject,
      not_before: "2026-01-02T03:04:05Z",
      // After 2049 the validity is a GeneralizedTime.
      not_after: "2060-01-01T00:00:00Z",
      fingerprint_sha256: await sha256Colons(cert.der),
      expired: false,
    });
    // A stored PEM reads the same, `expired` as of the time asked.
    expect(await certificateInfo(cert.pem, Date.UTC(2061, 0, 1))).toMatchObject({ subject, expired: true });
  });

  it("takes the certificate out of surrounding text and CRLF lines, and answers it in canonical PEM", async () => {
    const cert = await selfSignedPem("CN=idp.acme.test", new Date(now - DAY), new Date(now + DAY));
    const pasted = `Subject: idp\r\n${cert.pem.replace(/\n/g, "\r\n")}\r\ntrailing notes`;
    const parsed = await parseCertificate(pasted, now);
    expect(parsed.ok && parsed.info.pem).toBe(cert.pem);
  });

  it("names the reason a certificate is unusable", async () => {
    const notYet = await selfSignedPem("CN=future.acme.test", new Date(now + DAY), new Date(now + 2 * DAY));
    const expired = await selfSignedPem("CN=old.acme.test", new Date(now - 2 * DAY), new Date(now - DAY));
    const good = await selfSignedPem("CN=idp.acme.test", new Date(now - DAY), new Date(now + DAY));
    const pem = (base64: string) => `-----BEGIN CERTIFICATE-----\n${base64}\n-----END CERTIFICATE-----`;
    const cases: [string, RegExp][] = [
      [notYet.pem, /^is not valid before \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/],
      [expired.pem, /^expired on \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/],
      ["hello", /^is not a PEM certificate \(-----BEGIN CERTIFICATE-----\)$/],
      [pem(base64Der(good.pem).slice(0, 120)), /^is not a well-formed X\.509 certificate$/],
      [pem("AAAA"), /^is not a well-formed X\.509 certificate$/],
      [pem("abc"), /^is not a well-formed X\.509 certificate$/],
      // A DER structure that is no certificate: a SEQUENCE holding one INTEGER.
      [pem(btoa("\x30\x03\x02\x01\x01")), /^is not a well-formed X\.509 certificate$/],
    ];
    for (const [text, message] of cases) {
      const parsed = await parseCertificate(text, now);
      expect(parsed.ok, text.slice(0, 80)).toBe(false);
      expect(!parsed.ok && parsed.message, text.slice(0, 80)).toMatch(message);
    }
  });
});
