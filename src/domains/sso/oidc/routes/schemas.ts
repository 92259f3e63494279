import { z } from "@hono/zod-openapi";

export const InstitutionParam = z.object({
  id: z.string().openapi({ param: { name: "id", in: "path" }, example: "ins_acme" }),
});

const Jwk = z
  .object({
    kty: z.enum(["RSA", "EC"]),
    kid: z.string().openapi({ description: "The key's RFC 7638 thumbprint." }),
    alg: z.enum(["RS256", "ES256"]),
    use: z.literal("sig"),
    n: z.string().optional().openapi({ description: "RSA keys." }),
    e: z.string().optional().openapi({ description: "RSA keys." }),
    crv: z.literal("P-256").optional().openapi({ description: "EC keys." }),
    x: z.string().optional().openapi({ description: "EC keys." }),
    y: z.string().optional().openapi({ description: "EC keys." }),
    x5c: z.array(z.string()).length(1).optional().openapi({
      description:
        "The key's self-signed X.509 certificate (standard base64 DER, RFC 7517 4.7): what a provider that takes certificates (Microsoft Entra ID) is given; also downloadable as PEM from `…/sso/oidc/certificate`.",
    }),
    x5t: z.string().optional().openapi({
      description:
        "The certificate's SHA-1 thumbprint, base64url (RFC 7517 4.8); the client assertion's header carries it (Microsoft Entra ID matches it).",
    }),
    "x5t#S256": z.string().optional().openapi({
      description:
        "The certificate's SHA-256 thumbprint, base64url (RFC 7517 4.9); also in the client assertion's header.",
    }),
  })
  .openapi("SsoClientJwk");

export const SsoJwksSchema = z.object({ keys: z.array(Jwk) }).openapi("SsoClientJwks");

export const SsoKeyRotationSchema = z
  .object({
    current_kid: z.string(),
    retired_kid: z.string().nullable(),
    retired_key_published_until: z.string().nullable().openapi({ example: "2026-12-04T09:30:00Z" }),
    keys: SsoJwksSchema.shape.keys,
  })
  .openapi("SsoKeyRotation");
