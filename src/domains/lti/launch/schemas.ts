import { z } from "@hono/zod-openapi";
import { LAUNCH_KINDS, LAUNCH_STATUSES } from "../../../db/schema";
import { pageQueryShape, pageSchema } from "../../../platform/http/pagination";
import { UserSchema } from "../../auth/schemas";
import { PassbackSchema } from "../grades/passback-schemas";
import { MAX_URL } from "../schemas";

/**
 * The wire shapes of a launch: the platform's login initiation and the callback's form post, the
 * launch as the log answers it (with its deep-linking request and its passbacks), and the session a
 * launch gives the learning app through the code exchange.
 */

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
