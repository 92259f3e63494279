import { z } from "@hono/zod-openapi";
import { SSO_DOMAIN_METHODS, SSO_DOMAIN_STATUSES } from "../../../db/schema";
import { isPublicMailDomain } from "./public-mail-domains";

/**
 * The e-mail domains of SSO settings on the wire: a domain as a PUT of the settings lists it (no
 * public mail provider's), the path and body of a domain's verification, and each domain's
 * verification as answered (the TXT record to publish, its status).
 */

const DOMAIN_NAME = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

export const Domain = z
  .string()
  .trim()
  .toLowerCase()
  .regex(DOMAIN_NAME, "must be a domain name like acme.edu")
  .refine(
    (domain) => !isPublicMailDomain(domain),
    "is a public e-mail provider's domain, whose addresses belong to anybody: use your institution's own domain",
  )
  // The document's pattern is what the request may hold: spaces around it and capitals are accepted,
  // trimmed and lower-cased before DOMAIN_NAME is checked (the answer shows the lower-case form).
  .openapi({
    example: "acme.edu",
    pattern:
      "^\\s*(?=\\S{1,253}\\s*$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}\\s*$",
    description: "A domain name; surrounding spaces are dropped and letters lower-cased.",
  });

export const SsoDomainParams = z.object({
  id: z.string().openapi({ param: { name: "id", in: "path" }, example: "ins_acme" }),
  domain: z
    .string()
    .trim()
    .toLowerCase()
    .openapi({ param: { name: "domain", in: "path" }, example: "acme.edu" }),
});

export const VerifyDomainBody = z
  .strictObject({
    method: z.enum(SSO_DOMAIN_METHODS).default("dns").openapi({
      description:
        "`dns` (default): look the TXT record up now. `manual`: platform staff only, confirm the domain without DNS (403 for anybody else).",
    }),
  })
  .openapi("VerifySsoDomain");

const instant = z.string().openapi({ example: "2026-11-21T09:30:00Z" });

export const DomainVerificationSchema = z
  .object({
    domain: z.string().openapi({ example: "acme.edu" }),
    status: z.enum(SSO_DOMAIN_STATUSES).openapi({
      description:
        "`pending`: routes nobody yet. `verified`: members with addresses at this domain sign in through this connection.",
    }),
    method: z.enum(SSO_DOMAIN_METHODS).nullable().openapi({
      description:
        "How it was verified: `dns` (the TXT record) or `manual` (platform staff); null while pending.",
    }),
    txt_name: z
      .string()
      .openapi({ description: "Where to publish the TXT record: the domain itself.", example: "acme.edu" }),
    txt_value: z.string().openapi({
      description: "The TXT record's text; its token is this institution's, for this domain.",
      example: "lingua-domain-verification=3f9c1e0a7b2d4c6e8f1a3b5c7d9e0f12",
    }),
    verified_at: instant.nullable(),
  })
  .openapi("SsoDomainVerification");
