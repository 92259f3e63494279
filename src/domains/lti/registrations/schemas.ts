import { z } from "@hono/zod-openapi";
import { pageSchema } from "../../../platform/http/pagination";
import { displayText } from "../../../platform/text";
import { MAX_URL } from "../schemas";

/**
 * The wire shapes of registrations: a platform's registration as sent and as answered (with the
 * tool URLs to paste into the platform), the registration's public keys and their rotation, and
 * dynamic registration's link and the request that redeems it.
 */

const PlatformUrl = (description: string, example: string) =>
  z
    .string()
    .max(MAX_URL)
    .openapi({
      example,
      description: `${description} Absolute \`https\` URL without credentials; private, loopback, link-local and metadata addresses are refused (local development may allow http and loopback with \`ALLOW_LOOPBACK_TARGETS\`).`,
    });

const Name = displayText({ max: 200 }, { example: "Canvas (production)" });
const Issuer = z.string().trim().min(1, "must not be empty").max(MAX_URL).openapi({
  example: "https://canvas.instructure.com",
  description: "The platform's `iss` (its issuer identifier), exactly as its id_tokens carry it.",
});
const ClientId = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(255)
  .openapi({ example: "10000000000042", description: "The client id the platform gave this tool." });
const DeploymentIds = z
  .array(z.string().trim().min(1, "must not be empty").max(255))
  .min(1, "must list at least one deployment id")
  .max(100)
  .refine((ids) => new Set(ids).size === ids.length, { message: "must not repeat a deployment id" })
  .openapi({
    example: ["1:4dde05e8ca1973bcca9bffc13e1548820eee93a3"],
    description:
      "The deployment ids launches may carry (`https://purl.imsglobal.org/spec/lti/claim/deployment_id`).",
  });
const Audience = z.string().trim().min(1).max(MAX_URL).nullable().openapi({
  description:
    "The `aud` of the tool's client assertion at the token endpoint, where the platform wants one other than `auth_token_url` (Moodle: none; Canvas: none; Blackboard: its token URL).",
});

const consumerFields = {
  name: Name,
  issuer: Issuer,
  client_id: ClientId,
  deployment_ids: DeploymentIds,
  auth_login_url: PlatformUrl(
    "The platform's OIDC authorization endpoint.",
    "https://sso.canvaslms.com/api/lti/authorize_redirect",
  ),
  auth_token_url: PlatformUrl(
    "The platform's OAuth 2 token endpoint.",
    "https://sso.canvaslms.com/login/oauth2/token",
  ),
  jwks_url: PlatformUrl("The platform's public key set.", "https://sso.canvaslms.com/api/lti/security/jwks"),
};

export const CreateConsumerBody = z
  .strictObject({ ...consumerFields, auth_token_audience: Audience.optional() })
  .openapi("CreateLtiConsumerRequest");

export const UpdateConsumerBody = z
  .strictObject({
    name: consumerFields.name.optional(),
    issuer: consumerFields.issuer.optional(),
    client_id: consumerFields.client_id.optional(),
    deployment_ids: consumerFields.deployment_ids.optional(),
    auth_login_url: consumerFields.auth_login_url.optional(),
    auth_token_url: consumerFields.auth_token_url.optional(),
    jwks_url: consumerFields.jwks_url.optional(),
    auth_token_audience: Audience.optional(),
  })
  .refine((body) => Object.keys(body).length > 0, { message: "must change at least one field" })
  .openapi("UpdateLtiConsumerRequest");

export const ToolUrlsSchema = z
  .object({
    login_url: z.string().openapi({
      example: "https://api.lingua.example/api/lti/login/ltc_01JD3Q8W2X4Y5Z6A7B8C9D0E1H",
      description:
        "OIDC login initiation URL, this registration's own (Canvas: “OpenID Connect Initiation Url”; Moodle: “Initiate login URL”). A platform that cannot take a URL per registration may use the shared `/api/lti/login` instead, which chooses the registration by issuer, client id and deployment id.",
    }),
    launch_url: z.string().openapi({
      example: "https://api.lingua.example/api/lti/callback/ltc_01JD3Q8W2X4Y5Z6A7B8C9D0E1H",
      description:
        "Target link URI, this registration's own (Canvas: “Target Link URI”; Moodle: “Tool URL”). Append `?course={id}` or `?lesson={id}` to launch a course or lesson. A link to the shared `/api/lti/callback` is accepted as well.",
    }),
    jwks_url: z.string().openapi({
      example: "https://api.lingua.example/api/lti/jwks/ltc_01JD3Q8W2X4Y5Z6A7B8C9D0E1H",
      description:
        "This registration's public keys, which sign its client assertions and no other registration's (Canvas: “Public JWK URL”; Moodle: “Public keyset”).",
    }),
    redirect_uris: z.array(z.string()).openapi({
      example: ["https://api.lingua.example/api/lti/callback/ltc_01JD3Q8W2X4Y5Z6A7B8C9D0E1H"],
      description:
        "Where the platform posts the id_token (Canvas/Moodle: “Redirect URI(s)”): this registration's own callback, which a login through its `login_url` names as `redirect_uri` and which redeems only such logins of this registration. Paste it (and only Lingua URLs) into the platform: the platform refuses a login naming a redirect URI it was not configured with, which is what keeps another registration's login URL from receiving this platform's launches. A platform using the shared `/api/lti/login` posts to the shared `/api/lti/callback` instead.",
    }),
  })
  .openapi("LtiToolUrls");

export const ConsumerSchema = z
  .object({
    id: z.string().openapi({ example: "ltc_01JD3Q8W2X4Y5Z6A7B8C9D0E1H" }),
    institution_id: z.string(),
    name: z.string(),
    issuer: z.string(),
    client_id: z.string(),
    deployment_ids: z.array(z.string()),
    auth_login_url: z.string(),
    auth_token_url: z.string(),
    jwks_url: z.string(),
    auth_token_audience: z.string().nullable(),
    tool: ToolUrlsSchema,
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("LtiConsumer");

export const ConsumerPageSchema = pageSchema(ConsumerSchema, "LtiConsumerPage");

export const JwksSchema = z
  .object({
    keys: z.array(
      z.object({
        kty: z.literal("RSA"),
        kid: z.string(),
        alg: z.literal("RS256"),
        use: z.literal("sig"),
        n: z.string(),
        e: z.string(),
      }),
    ),
  })
  .openapi("LtiJwks");

export const RotatedKeysSchema = z
  .object({
    current_kid: z.string(),
    retired_kid: z.string().nullable(),
    retired_key_published_until: z.string().nullable(),
    keys: JwksSchema.shape.keys,
  })
  .openapi("LtiKeyRotation");

export const RegistrationLinkSchema = z
  .object({
    url: z.string().openapi({
      example: "https://api.lingua.example/api/lti/register?link=q0Vb4rj2cE1bQ6tq3mW2n0jv8yQ5b2d7VhX9k3o1pZs",
      description:
        "What the LMS administrator pastes into the LMS's “register a tool by URL” field (Canvas: _LTI Registration_ URL; Moodle: _Tool URL_ under _LTI Advantage_). Absolute, single use, bound to your institution; it carries no API token. Treat it as a secret until it is used: whoever holds it can register a platform for your institution.",
    }),
    expires_at: z.string().openapi({
      example: "2026-11-28T09:30:00Z",
      description: "24 hours after creation; unused by then, the link is refused (`410`).",
    }),
  })
  .openapi("LtiRegistrationLink");

/** `GET /api/lti/register`: the link's own parameter, and the two the platform appends. */
export const RegisterQuery = z
  .object({
    link: z.string().min(1).max(200).openapi({
      description: "The link's secret, as the link from `POST …/registration-links` carries it.",
    }),
    openid_configuration: z.string().min(1).max(MAX_URL).openapi({
      description:
        "Added by the platform: the URL of its OpenID configuration (LTI Dynamic Registration 1.0).",
    }),
    registration_token: z.string().max(4096).optional().openapi({
      description:
        "Added by the platform when it uses one: sent back as `Authorization: Bearer` when Lingua reads the configuration and posts its registration.",
    }),
  })
  .openapi("LtiDynamicRegistrationInitiation");
