import { z } from "@hono/zod-openapi";
import { SSO_STATES, SSO_TYPES } from "../../../db/schema";
import { Domain, DomainVerificationSchema } from "./domain-schemas";
import { AttributeMapping, AttributeMappingInput, ClaimMapping, ClaimMappingInput } from "./mapping-schemas";
import { TOKEN_ENDPOINT_AUTH_METHODS } from "./oidc";

/**
 * An institution's SSO settings on the wire: the PUT body (SAML or OIDC, the domains, enforcement,
 * the break-glass admin) and the settings as answered. The field mappings are in
 * `mapping-schemas.ts`, the domains and their verification in `domain-schemas.ts`.
 */

export const MAX_DOMAINS = 50;
export const MAX_CERTIFICATES = 5;
export const MAX_METADATA_XML = 256 * 1024;
const MAX_URL = 2048;

export const SsoParams = z.object({
  id: z.string().openapi({ param: { name: "id", in: "path" }, example: "ins_acme" }),
});

export const DEFAULT_SCOPES = ["openid", "email", "profile"];

const Url = z.string().max(MAX_URL, `must be at most ${MAX_URL} characters`);

export const SamlInput = z
  .strictObject({
    idp_entity_id: z.string().min(1).max(1024).nullable().optional(),
    sso_url: Url.nullable().optional().openapi({ description: "The IdP's single sign-on URL; https." }),
    certificates: z.array(z.string().max(16_384)).max(MAX_CERTIFICATES).optional().openapi({
      description:
        "PEM X.509 signing certificates of the IdP (up to 5, e.g. during a rotation); none may be expired.",
    }),
    metadata_url: Url.nullable().optional().openapi({
      description: "The IdP's metadata URL (https): fetched now to fill the fields left out, and kept.",
    }),
    metadata_xml: z.string().max(MAX_METADATA_XML).optional().openapi({
      description: "The IdP's metadata document itself, parsed to fill the fields left out; not kept.",
    }),
    attribute_mapping: AttributeMappingInput.optional(),
    idp_initiated: z.boolean().default(false).openapi({
      description:
        "Accept IdP-initiated sign-in (a Response the IdP sends unasked, e.g. from a tile in the IdP's app launcher). Off by default: such a Response answers no request of ours, so nothing binds it to the browser that posts it.",
    }),
  })
  .openapi("SamlSettingsInput");

export const OidcInput = z
  .strictObject({
    issuer: Url.nullable().optional().openapi({
      description:
        "The OpenID Provider's issuer URL (https); its `/.well-known/openid-configuration` must name the same issuer.",
    }),
    client_id: z.string().min(1).max(512).nullable().optional(),
    client_secret: z.string().min(1).max(2048).nullable().optional().openapi({
      description:
        "Write-only: stored encrypted, never returned (answered as `client_secret_set`). Leave out to keep the stored one; `null` removes it.",
    }),
    scopes: z
      .array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, "must be a scope token"))
      .max(20)
      .optional(),
    claim_mapping: ClaimMappingInput.optional(),
    token_endpoint_auth_method: z.enum(TOKEN_ENDPOINT_AUTH_METHODS).nullable().optional().openapi({
      description:
        "How Lingua authenticates at the provider's token endpoint. `private_key_jwt`: with a client assertion (RFC 7523) signed by the institution's own key, published at `oidc.jwks_uri`; no client secret is needed. `client_secret_basic` / `client_secret_post`: with `client_secret`. Must be among the discovery document's `token_endpoint_auth_methods_supported` (absent there: `client_secret_basic` only), and for `private_key_jwt` its `token_endpoint_auth_signing_alg_values_supported` must allow RS256 or ES256. Left out or null: a client-secret method the provider allows, `client_secret_basic` first.",
      example: "private_key_jwt",
    }),
  })
  .openapi("OidcSettingsInput");

export const PutSsoBody = z
  .strictObject({
    type: z.enum(SSO_TYPES),
    state: z.enum(SSO_STATES).default("draft").openapi({
      description:
        "`draft` (being set up), `active` (members of the domains sign in through it) or `inactive`.",
    }),
    enforced: z.boolean().default(false).openapi({
      description: 'Members of the domains may only sign in through SSO; needs `state: "active"`.',
    }),
    domains: z.array(Domain).max(MAX_DOMAINS).default([]).openapi({
      description:
        "E-mail domains whose members sign in through this connection, once verified (see `domain_verifications`). Public mail domains (gmail.com, outlook.com, …) are refused.",
    }),
    saml: SamlInput.nullable().optional(),
    oidc: OidcInput.nullable().optional(),
    break_glass_admin_id: z.string().min(1).max(100).nullable().default(null).openapi({
      description:
        "The member id of one active `institution_admin` who keeps signing in with a password while SSO is `enforced` (break-glass, for when the identity provider is down). Null: nobody but platform staff.",
      example: "usr_01JD3Q8W2X4Y5Z6A7B8C9D0E1F",
    }),
    idp_may_grant_admin: z.boolean().default(false).openapi({
      description:
        "Whether the role the identity provider sends (`role` in the mapping) may make a member `institution_admin`. Default false: a mapped `institution_admin` becomes `instructor`, and admins appointed in Lingua keep their role whatever the IdP sends.",
    }),
  })
  .openapi("PutSsoSettings");
export type PutSsoInput = z.infer<typeof PutSsoBody>;

const instant = z.string().openapi({ example: "2026-11-21T09:30:00Z" });

const CertificateSchema = z
  .object({
    pem: z.string(),
    subject: z.string().openapi({ example: "CN=idp.acme.edu" }),
    issuer: z.string(),
    not_before: instant,
    not_after: instant,
    fingerprint_sha256: z.string().openapi({ example: "3a:9f:…" }),
    expired: z.boolean().openapi({ description: "As of this answer." }),
  })
  .openapi("SamlCertificate");

const SamlSchema = z
  .object({
    idp_entity_id: z.string().nullable(),
    sso_url: z.string().nullable(),
    certificates: z.array(CertificateSchema),
    metadata_url: z.string().nullable(),
    attribute_mapping: AttributeMapping,
    idp_initiated: z.boolean().openapi({ description: "Whether IdP-initiated sign-in is accepted." }),
    sp: z
      .object({ entity_id: z.string(), acs_url: z.string(), metadata_url: z.string() })
      .openapi({ description: "Our side, to enter at the IdP." }),
  })
  .openapi("SamlSettings");

const OidcSchema = z
  .object({
    issuer: z.string().nullable(),
    client_id: z.string().nullable(),
    client_secret_set: z.boolean(),
    scopes: z.array(z.string()),
    claim_mapping: ClaimMapping,
    token_endpoint_auth_method: z.enum(TOKEN_ENDPOINT_AUTH_METHODS).openapi({
      description:
        "How Lingua authenticates at the token endpoint: the method chosen, or the client-secret method the provider allows when none was chosen.",
    }),
    redirect_uri: z.string().openapi({ description: "Our side: register it at the OpenID Provider." }),
    jwks_uri: z.string().openapi({
      description:
        "Our side, for `private_key_jwt`: the institution's public keys (JWKS). Register it at the OpenID Provider as the client's key set URL (Okta: _Public keys_ → _Use a URL to fetch keys dynamically_; Entra: a certificate is uploaded instead, see the guide).",
      example: "https://api.lingua.example/api/institutions/ins_acme/sso/oidc/jwks",
    }),
  })
  .openapi("OidcSettings");

export const SsoSchema = z
  .object({
    institution_id: z.string(),
    type: z.enum(SSO_TYPES).nullable().openapi({ description: "Null until SSO is configured." }),
    state: z.enum(SSO_STATES),
    enforced: z.boolean(),
    domains: z.array(z.string()),
    domain_verifications: z.array(DomainVerificationSchema).openapi({
      description: "Each of `domains` with its verification, in the same order.",
    }),
    saml: SamlSchema.nullable(),
    oidc: OidcSchema.nullable(),
    break_glass_admin_id: z.string().nullable().openapi({
      description:
        "The institution admin who keeps a password while SSO is enforced; null: nobody but platform staff.",
    }),
    idp_may_grant_admin: z.boolean().openapi({
      description:
        "Whether the IdP's role mapping may make a member `institution_admin` (else at most `instructor`).",
    }),
    updated_at: instant.nullable(),
  })
  .openapi("SsoSettings");
