import { z } from "@hono/zod-openapi";
import { LAUNCH_KINDS, LAUNCH_STATUSES, PASSBACK_STATUSES } from "../../db/schema";
import { pageQueryShape, pageSchema } from "../../platform/http/pagination";
import { displayText } from "../../platform/text";
import { UserSchema } from "../auth/schemas";

const MAX_URL = 2048;

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

export const IdParam = z.object({
  id: z
    .string()
    .min(1)
    .openapi({ param: { name: "id", in: "path" }, example: "ltc_01JD3Q8W2X4Y5Z6A7B8C9D0E1H" }),
});

export const LaunchParam = z.object({
  launch: z
    .string()
    .min(1)
    .openapi({ param: { name: "launch", in: "path" }, example: "lti_01JD3Q8W2X4Y5Z6A7B8C9D0E1K" }),
});

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

export const ACTIVITY_PROGRESS = ["Initialized", "Started", "InProgress", "Submitted", "Completed"] as const;
export const GRADING_PROGRESS = ["FullyGraded", "Pending", "PendingManual", "Failed", "NotReady"] as const;

export const PassbackBody = z
  .strictObject({
    score_given: z.number().min(0, "must be >= 0").openapi({ example: 8.5 }),
    score_maximum: z.number().positive("must be > 0").openapi({ example: 10 }),
    activity_progress: z.enum(ACTIVITY_PROGRESS).default("Completed"),
    grading_progress: z.enum(GRADING_PROGRESS).default("FullyGraded"),
    comment: z.string().max(4000, "must be at most 4000 characters").nullable().optional(),
    line_item_url: z.string().max(2048).optional().openapi({
      example: "https://canvas.example.edu/api/lti/courses/42/line_items/7",
      description:
        "The line item (an `id` from `GET /api/integrations/lti-launches/{launch}/line-items`) to grade instead of the launch's own: a line item of the launch's context — the launch's `lineitem`, or a URL below its `lineitems` URL on the same origin; anything else is `422`. The launch needs the score scope and a `lineitems` URL.",
    }),
  })
  .openapi("LtiGradePassbackRequest");

export const PassbackSchema = z
  .object({
    id: z.string().openapi({ example: "lpb_01JD3Q8W2X4Y5Z6A7B8C9D0E1M" }),
    launch_id: z.string(),
    source: z.enum(["manual", "automatic"]).openapi({
      description: "`automatic`: sent for a `lesson.completed` / `course.completed` event (`event_id`).",
    }),
    event_id: z.string().nullable(),
    line_item_url: z.string().nullable().openapi({
      description: "The line item the grade went to when the request named one; null: the launch's own.",
    }),
    status: z.enum(PASSBACK_STATUSES).openapi({
      description:
        "`pending` (queued), `retrying` (the platform failed or timed out; a retry is scheduled), `succeeded`, `failed` (rejected by the platform, or retries used up).",
    }),
    score_given: z.number().nullable(),
    score_maximum: z.number().nullable(),
    activity_progress: z.enum(ACTIVITY_PROGRESS),
    grading_progress: z.enum(GRADING_PROGRESS),
    comment: z.string().nullable(),
    timestamp: z
      .string()
      .openapi({ description: "The score's `timestamp` as sent (the same on every retry)." }),
    attempt_count: z.number().int(),
    platform_status: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "HTTP status of the platform's last answer; null when none came." }),
    last_error: z.string().nullable(),
    sent_at: z.string().nullable().openapi({ description: "When the platform accepted the score." }),
    created_at: z.string(),
  })
  .openapi("LtiPassback");

export const DeepLinkingRequestSchema = z
  .object({
    return_url: z.string().openapi({
      description: "The platform's `deep_link_return_url`, where the response is posted.",
    }),
    accept_types: z.array(z.string()).openapi({ example: ["ltiResourceLink"] }),
    accept_presentation_document_targets: z.array(z.string()).openapi({ example: ["iframe", "window"] }),
    accept_multiple: z.boolean().openapi({ description: "Whether several items may be returned." }),
    accept_lineitem: z
      .boolean()
      .openapi({ description: "Whether an item may ask the platform for a gradebook column." }),
    title: z.string().nullable(),
    text: z.string().nullable(),
    responded_at: z.string().nullable().openapi({
      description: "When the launch's one response was built; null while the instructor still chooses.",
    }),
  })
  .openapi("LtiLaunchDeepLinking");

const Target = z
  .object({ type: z.enum(["course", "lesson"]), id: z.string(), title: z.string().nullable() })
  .nullable()
  .openapi({
    description:
      "What the launch opens: custom claim `lingua_course_id` / `lingua_lesson_id`, or a `target_link_uri` ending in `?course={id}` / `?lesson={id}`.",
  });

export const LaunchSchema = z
  .object({
    id: z.string().openapi({ example: "lti_01JD3Q8W2X4Y5Z6A7B8C9D0E1K" }),
    status: z.enum(LAUNCH_STATUSES),
    failure_reason: z.string().nullable().openapi({
      description:
        "Why a launch was refused (a stable code such as `nonce_mismatch`); null when it succeeded.",
      example: null,
    }),
    failure_detail: z.string().nullable(),
    consumer_id: z.string().nullable(),
    deployment_id: z.string().nullable(),
    message_type: z.string().nullable(),
    user_id: z.string().nullable(),
    sub: z.string().nullable(),
    roles: z.array(z.string()),
    context: z.record(z.string(), z.unknown()).nullable().openapi({ description: "`id`, `label`, `title`." }),
    resource_link: z.record(z.string(), z.unknown()).nullable().openapi({ description: "`id`, `title`." }),
    custom: z.record(z.string(), z.unknown()).nullable(),
    target: Target,
    target_link_uri: z.string().nullable(),
    ags: z
      .record(z.string(), z.unknown())
      .nullable()
      .openapi({ description: "The AGS endpoint claim as sent: `lineitem`, `lineitems`, `scope`." }),
    nrps: z.record(z.string(), z.unknown()).nullable().openapi({ description: "The NRPS claim as sent." }),
    kind: z.enum(LAUNCH_KINDS).nullable().openapi({
      description:
        "`resource_link` (an `LtiResourceLinkRequest`: someone opened a link) or `deep_linking` (an `LtiDeepLinkingRequest`: an instructor choosing content to link); null on a refused launch.",
    }),
    deep_linking: DeepLinkingRequestSchema.nullable().openapi({
      description: "A deep-linking launch's request and whether its response was sent; null otherwise.",
    }),
    created_at: z.string(),
  })
  .openapi("LtiLaunch");

export const LaunchWithPassbacksSchema = LaunchSchema.extend({ passbacks: z.array(PassbackSchema) }).openapi(
  "LtiLaunchWithPassbacks",
);

export const LaunchPageSchema = pageSchema(LaunchSchema, "LtiLaunchPage");

export const ListLaunchesQuery = z.object({
  ...pageQueryShape,
  consumer_id: z.string().optional().openapi({ description: "Only launches of this registration." }),
  user_id: z.string().optional().openapi({ description: "Only launches of this user." }),
  status: z.enum(LAUNCH_STATUSES).optional(),
  kind: z.enum(LAUNCH_KINDS).optional().openapi({ description: "Only launches of this kind." }),
});

export const SessionSchema = z
  .object({
    token: z.string().openapi({ description: "Bearer token for the learning app (8 hours)." }),
    token_type: z.literal("Bearer"),
    expires_at: z.string(),
  })
  .openapi("LtiSession");

export const LaunchResultSchema = z
  .object({ launch: LaunchSchema, user: UserSchema, session: SessionSchema })
  .openapi("LtiLaunchResult");

export const SessionExchangeBody = z
  .strictObject({
    code: z.string().min(1).max(200).openapi({ description: "The `code` of the launch URL's fragment." }),
  })
  .openapi("LtiSessionExchangeRequest");

export const LoginParams = z
  .object({
    iss: z.string().min(1).max(MAX_URL),
    login_hint: z.string().min(1).max(4096),
    target_link_uri: z.string().min(1).max(MAX_URL),
    client_id: z.string().min(1).max(255).optional(),
    lti_message_hint: z.string().max(4096).optional(),
    lti_deployment_id: z.string().max(255).optional(),
    lti_storage_target: z.string().max(255).optional().openapi({
      description:
        "LTI Client Side postMessage: the name of the platform's frame that keeps data for the tool (`_parent`: the frame's parent or opener). When sent, a browser gets the platform-storage page instead of the 302: it stores the `state` and `nonce` there (`lti.put_data`) and then goes to the authorization endpoint.",
    }),
  })
  .openapi("LtiLoginInitiation");

export const CallbackForm = z
  .object({
    id_token: z.string().optional().openapi({ description: "The signed LTI message." }),
    state: z.string().optional(),
    error: z
      .string()
      .optional()
      .openapi({ description: "Sent by the platform instead of an id_token when it refused." }),
    error_description: z.string().optional(),
    lti_storage_target: z.string().optional(),
    platform_storage_state: z.string().optional().openapi({
      description:
        "Posted by Lingua's own platform-storage page, never by the platform: the value it read from the platform's storage for this `state` (`lti.get_data`). Accepted only from Lingua's origin (`Origin`, `Sec-Fetch-Site`).",
    }),
    platform_storage_nonce: z.string().optional().openapi({
      description: "Posted by Lingua's platform-storage page: the value it read for the login's nonce.",
    }),
    platform_storage_error: z.string().optional().openapi({
      description:
        "Posted by Lingua's platform-storage page when it could not read the values (`timeout`, `not_found`, the platform's error code).",
    }),
  })
  .openapi("LtiLaunchCallback");
