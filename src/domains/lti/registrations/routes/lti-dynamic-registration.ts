import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { ApiError, fieldErrorsFromZod, toApiError, validationError } from "../../../../platform/errors";
import { publicRoute } from "../../../../platform/openapi";
import { errorResponses } from "../../../../platform/openapi-problems";
import { limitByIp } from "../../../../platform/ratelimit/middleware";
import { IP_POLICIES } from "../../../../platform/ratelimit/policies";
import { platformFrameAncestors, registeredPage, registrationErrorPage } from "../dynamic/pages";
import { registerWithLink } from "../dynamic/register";
import { RegisterQuery } from "../schemas";
import { REGISTER_PATH } from "../tool-urls";

const page = (description: string) => ({
  description,
  content: { "text/html": { schema: { type: "string" as const } } },
});

export const ltiDynamicRegistrationRoute = publicRoute({
  method: "get",
  path: REGISTER_PATH,
  tags: ["LTI"],
  operationId: "ltiDynamicRegistration",
  summary: "LTI Dynamic Registration (the page a registration link opens)",
  description: `The URL of \`POST /api/integrations/lti-consumers/registration-links\`, opened by the LMS in an iframe or window with \`openid_configuration\` and \`registration_token\` added (LTI Dynamic Registration 1.0). Lingua takes the link (single use; a second attempt while one runs is 409), reads the LMS's OpenID configuration through the outbound gate (with the registration token as \`Authorization: Bearer\`), checks it (its \`issuer\` must prefix the configuration URL; the required fields of an LTI platform: \`authorization_endpoint\`, \`token_endpoint\`, \`jwks_uri\`, \`registration_endpoint\`, \`private_key_jwt\` with RS256, \`id_token\` responses, the LTI platform configuration with its product, version and messages; its URLs pass the rules of platform URLs), posts the tool's registration to \`registration_endpoint\` (\`application_type\` \`web\`, \`response_types\` \`["id_token"]\`, \`grant_types\` \`["implicit", "client_credentials"]\`, the registration's own \`initiate_login_uri\`, \`redirect_uris\` and \`jwks_uri\`, \`token_endpoint_auth_method\` \`private_key_jwt\`, the AGS and NRPS scopes, and the LTI tool configuration: domain, target link URI, claims, the resource-link message and, when the LMS supports it, the deep-linking message), and stores the registration in the link's institution with the LMS's \`client_id\` and \`deployment_id\`, its keys made at once. The answer is an HTML page that posts \`{subject: "org.imsglobal.lti.close"}\` to \`window.opener || window.parent\`, so the LMS closes it. Every error is a page too, saying what went wrong, with nothing stored; the link stays usable after a failed attempt until it expires. Pages carry a strict Content-Security-Policy (their one script and style allowed by hash) and may be framed only by the LMS's origin (that of \`openid_configuration\`, and its parent domain's hosts). Limited to ${IP_POLICIES.lti.limit} requests per client IP per minute, with the LTI launch.`,
  request: { query: RegisterQuery },
  responses: {
    200: page("Registered: the page that tells the LMS to close it."),
    404: page("`lti_registration_link_unknown`: the link is not one Lingua issued."),
    409: page(
      "`lti_registration_in_progress`: another attempt with the link is under way; or `conflict`: the institution has a registration of this issuer and client id already.",
    ),
    410: page("`lti_registration_link_used` or `lti_registration_link_expired`."),
    422: page("`validation_failed`: `link` or `openid_configuration` is missing or too long."),
    429: errorResponses[429],
    500: page("`internal_error`."),
    503: page(
      "`institution_moving`: the link's institution is being switched to another database; open the link again in a few seconds.",
    ),
    502: page(
      "`lti_platform_configuration_invalid`: the OpenID configuration could not be read or fails validation; `lti_registration_rejected`: the registration endpoint refused the registration or answered no usable `client_id`.",
    ),
  },
});

const limit = limitByIp(IP_POLICIES.lti);

export function registerLtiDynamicRegistration(app: OpenAPIHono<AppEnv>) {
  app.openAPIRegistry.registerPath(ltiDynamicRegistrationRoute);
  app.get(REGISTER_PATH, limit, async (c) => {
    const ctx = c.get("ctx");
    const raw = c.req.query();
    const frameAncestors = platformFrameAncestors(raw.openid_configuration);
    try {
      const parsed = RegisterQuery.safeParse(raw);
      if (!parsed.success) throw validationError(fieldErrorsFromZod(parsed.error.issues));
      const query = parsed.data;
      const { consumer } = await registerWithLink(ctx, {
        link: query.link,
        configurationUrl: query.openid_configuration,
        registrationToken: query.registration_token || undefined,
        origin: new URL(c.req.url).origin,
      });
      return registeredPage({ consumer, frameAncestors });
    } catch (error) {
      if (!(error instanceof ApiError))
        console.error(
          JSON.stringify({
            level: "error",
            request_id: ctx.requestId,
            path: c.req.path,
            error: String(error),
          }),
        );
      return registrationErrorPage({ error: toApiError(error), requestId: ctx.requestId, frameAncestors });
    }
  });
}
