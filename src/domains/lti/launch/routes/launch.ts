import { type OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import type { AppEnv } from "../../../../env";
import { config } from "../../../../platform/config";
import { ApiError, fieldErrorsFromZod, toApiError, validationError } from "../../../../platform/errors";
import { errorResponses, jsonBody, jsonResponse, publicRoute } from "../../../../platform/openapi";
import { limitByIp } from "../../../../platform/ratelimit/middleware";
import { IP_POLICIES } from "../../../../platform/ratelimit/policies";
import { presentUser } from "../../../auth/present";
import { LTI } from "../../prefixes";
import { CallbackForm, IdParam, LaunchResultSchema, LoginParams, SessionExchangeBody } from "../../schemas";
import { completeLaunch, exchangeCode } from "../complete-launch";
import { presentLaunch } from "../launch-log";
import { STATE_COOKIE_PREFIX, startLogin } from "../login";
import { appPage, errorPage, wantsJson } from "../pages";

const TAGS = ["LTI"];
const limit = limitByIp(IP_POLICIES.lti);
const LIMIT_NOTE = `Limited to ${IP_POLICIES.lti.limit} requests per client IP per minute (with the login, the callback and the session exchange).`;

const html = (description: string) => ({
  description,
  content: { "text/html": { schema: { type: "string" as const } } },
});
const form = <T>(schema: T) => ({
  required: true,
  content: { "application/x-www-form-urlencoded": { schema } },
});

const sharedLoginNote = `This is the shared login URL, the fallback for platforms that cannot be given a registration's own \`tool.login_url\` (\`/api/lti/login/{id}\`): Lingua finds the registration by \`iss\`, \`client_id\` and \`lti_deployment_id\` (an issuer with several registrations needs \`client_id\`: 400; when registrations of several institutions share the issuer and client id, \`lti_deployment_id\` must name a deployment only one of them lists, else 400 with \`reason\` \`registration_ambiguous\`, logged). Its \`redirect_uri\` is the shared \`/api/lti/callback\`.`;
const boundLoginNote = `This is a registration's own login URL (its \`tool.login_url\`): the login goes to that registration only, whose issuer it must carry as \`iss\` and, when sent, client id as \`client_id\` and one of its deployment ids as \`lti_deployment_id\` (else 400; unknown registration: 400). Another institution's registration of the same platform is not looked at. Its \`redirect_uri\` is the registration's own callback \`/api/lti/callback/{id}\` (\`tool.redirect_uris\`), which the platform answers only when it was configured with it, and the launch posted there is validated against this registration alone.`;
const loginDescription = (note: string) =>
  `Third-party initiated login (LTI 1.3 / OpenID Connect). The platform sends the browser here with \`iss\`, \`login_hint\`, \`target_link_uri\` and optionally \`client_id\`, \`lti_message_hint\`, \`lti_deployment_id\`, \`lti_storage_target\`. ${note} Lingua checks that \`target_link_uri\` is its launch URL (the registration's \`tool.launch_url\` or the shared \`/api/lti/callback\`), stores a single-use \`state\` and \`nonce\` for 10 minutes, and answers 302 to the platform's \`auth_login_url\` with \`scope=openid\`, \`response_type=id_token\`, \`response_mode=form_post\`, \`prompt=none\`, \`client_id\`, \`redirect_uri\`, \`login_hint\`, \`lti_message_hint\` (when sent), \`state\` and \`nonce\`. It also sets a state cookie (\`Secure; HttpOnly; SameSite=None; Partitioned\`), checked on the callback when the browser sends it back; the launch works without it. Errors are pages for browsers, problem+json for \`Accept: application/json\`. ${LIMIT_NOTE}`;

const loginResponses = {
  200: jsonResponse(
    z.object({ redirect_url: z.string() }).openapi("LtiLoginRedirect"),
    "With `Accept: application/json`: where to send the browser (the same URL as the 302's `Location`; the state cookie is set as well).",
  ),
  302: {
    description: "To the platform's OIDC authorization endpoint.",
    headers: {
      Location: { schema: { type: "string" as const } },
      "Set-Cookie": { schema: { type: "string" as const }, description: "`lti_state_<state>`, 10 minutes." },
    },
  },
  400: {
    ...errorResponses[400],
    description:
      "Unknown registration, deployment or target_link_uri; or a login several registrations match (`reason` `registration_ambiguous`).",
  },
  422: errorResponses[422],
};

const loginGet = publicRoute({
  method: "get",
  path: `${LTI}/login`,
  tags: TAGS,
  operationId: "ltiLogin",
  summary: "LTI 1.3 OIDC login initiation (shared URL, fallback)",
  description: loginDescription(sharedLoginNote),
  request: { query: LoginParams },
  responses: loginResponses,
});

const loginPost = publicRoute({
  method: "post",
  path: `${LTI}/login`,
  tags: TAGS,
  operationId: "ltiLoginPost",
  summary: "LTI 1.3 OIDC login initiation (shared URL, fallback; form post)",
  description: loginDescription(sharedLoginNote),
  request: { body: form(LoginParams) },
  responses: loginResponses,
});

const registrationLoginGet = publicRoute({
  method: "get",
  path: `${LTI}/login/{id}`,
  tags: TAGS,
  operationId: "ltiRegistrationLogin",
  summary: "LTI 1.3 OIDC login initiation (a registration's own URL)",
  description: loginDescription(boundLoginNote),
  request: { params: IdParam, query: LoginParams },
  responses: loginResponses,
});

const registrationLoginPost = publicRoute({
  method: "post",
  path: `${LTI}/login/{id}`,
  tags: TAGS,
  operationId: "ltiRegistrationLoginPost",
  summary: "LTI 1.3 OIDC login initiation (a registration's own URL; form post)",
  description: loginDescription(boundLoginNote),
  request: { params: IdParam, body: form(LoginParams) },
  responses: loginResponses,
});

const sharedCallbackNote =
  "This is the shared callback, the redirect URI of the shared login `/api/lti/login` (the fallback): it redeems only states of that login.";
const boundCallbackNote =
  "This is a registration's own callback, its `tool.redirect_uris` and `tool.launch_url`: a login through the registration's own `tool.login_url` names it as `redirect_uri`, which the platform answers only when it was configured with it, and it redeems only the states of such logins of that registration (the id_token is validated against that registration alone: its `jwks_url`, issuer, client id and deployments).";
const callbackDescription = (note: string) =>
  `The platform's browser posts \`id_token\` and \`state\` here. ${note} Checked in this order, the first failure refusing the launch with \`reason\`: \`state\` known (\`state_unknown\`), issued for this callback (\`state_wrong_callback\`; not spent), unused and unexpired (\`state_used\`, \`state_expired\`, \`state_cookie_mismatch\`); the header's \`alg\` is RS256 (\`alg_not_allowed\`) and its \`kid\` in the platform's JWKS, fetched again once when unknown (\`kid_unknown\`; \`jwks_unavailable\` is 502); signature (\`signature_invalid\`); \`iss\` (\`issuer_mismatch\`); \`aud\` and \`azp\` (\`audience_mismatch\`, \`azp_mismatch\`); \`exp\`/\`iat\` with 60 s of skew (\`token_expired\`, \`token_not_yet_valid\`); \`nonce\` (\`nonce_mismatch\`); deployment (\`deployment_unknown\`) and, after the shared login only, listed by no other registration of the issuer and client id (\`registration_ambiguous\`, logged); version 1.3.0 (\`version_unsupported\`); message type \`LtiResourceLinkRequest\` (\`message_type_unsupported\`); \`sub\`, \`roles\`, \`resource_link.id\` (\`claim_missing\`); \`target_link_uri\` (\`target_link_uri_foreign\`); the course or lesson it names exists (\`target_unknown\`); the person is not a suspended member (\`member_suspended\`) and, when new, finds a free seat (\`seats_exhausted\`). A refused launch records only a launch-log entry (\`launch_id\` in the problem).\n\nAccepted: the person is found or created by (registration, \`sub\`) as a member of the registration's institution, the launch is recorded, and \`Accept: application/json\` answers 200 with a session token (8 hours, the abilities of the launch's role except \`tokens:write\`: a launch session cannot mint API tokens). A browser gets 303 to the learning app (\`LTI_APP_URL\`, or the worker's page \`/api/lti/app\`) with \`#code=…\` in the fragment, exchanged at \`POST /api/lti/session\`. ${LIMIT_NOTE}`;

const callbackResponses = {
  200: jsonResponse(LaunchResultSchema, "The launch, its user and a session (`Accept: application/json`)."),
  303: {
    description: "Browsers: to the learning app, the code in the URL fragment.",
    headers: { Location: { schema: { type: "string" as const } } },
  },
  400: {
    description:
      "Launch refused: `code` `lti_launch_refused`, `reason` (see above) and `launch_id` (the log entry). Browsers get a page.",
    content: { ...errorResponses[400].content, ...html("The same, as a page.").content },
  },
  502: {
    ...errorResponses[400],
    description: "The platform's key set could not be fetched (`reason` `jwks_unavailable`).",
  },
};

const callbackRoute = publicRoute({
  method: "post",
  path: `${LTI}/callback`,
  tags: TAGS,
  operationId: "ltiLaunchCallback",
  summary: "LTI 1.3 launch (the platform's form post; shared callback, fallback)",
  description: callbackDescription(sharedCallbackNote),
  request: { body: form(CallbackForm) },
  responses: callbackResponses,
});

const registrationCallbackRoute = publicRoute({
  method: "post",
  path: `${LTI}/callback/{id}`,
  tags: TAGS,
  operationId: "ltiRegistrationLaunchCallback",
  summary: "LTI 1.3 launch (the platform's form post; a registration's own redirect URI)",
  description: callbackDescription(boundCallbackNote),
  request: { params: IdParam, body: form(CallbackForm) },
  responses: callbackResponses,
});

const sessionRoute = publicRoute(
  {
    method: "post",
    path: `${LTI}/session`,
    tags: TAGS,
    operationId: "exchangeLtiCode",
    summary: "Exchange a launch code for a session",
    description: `The learning app posts the \`code\` of its URL fragment (single use, 2 minutes) and receives the launch, the user and a session token (8 hours). Unknown, used or expired codes: 401. ${LIMIT_NOTE}`,
    middleware: [limit],
    request: { body: jsonBody(SessionExchangeBody) },
    responses: { 200: jsonResponse(LaunchResultSchema, "The launch's session."), 401: errorResponses[401] },
  },
  { countedPerIp: true },
);

const appRoute = publicRoute({
  method: "get",
  path: `${LTI}/app`,
  tags: TAGS,
  operationId: "ltiLaunchPage",
  summary: "Default launch page",
  description:
    "Where browsers land after a launch when the deployment sets no `LTI_APP_URL`: exchanges the fragment's code and shows the launched course or lesson.",
  responses: { 200: html("The page.") },
});

async function readForm(c: Context): Promise<Record<string, string>> {
  const type = c.req.header("Content-Type") ?? "";
  if (!/^application\/x-www-form-urlencoded|^multipart\/form-data/i.test(type))
    throw new ApiError("unsupported_media_type", "Send the form as `application/x-www-form-urlencoded`.");
  const body = await c.req.parseBody();
  return Object.fromEntries(
    Object.entries(body).filter((e): e is [string, string] => typeof e[1] === "string"),
  );
}

/** Errors as problem+json for clients asking for JSON, as pages for browsers. */
function answeringErrors(handler: (c: Context<AppEnv>) => Promise<Response>) {
  return async (c: Context<AppEnv>) => {
    try {
      return await handler(c);
    } catch (error) {
      if (wantsJson(c)) throw error;
      if (!(error instanceof ApiError))
        console.error(
          JSON.stringify({
            level: "error",
            request_id: c.get("requestId"),
            path: c.req.path,
            error: String(error),
          }),
        );
      return errorPage(c, toApiError(error));
    }
  };
}

async function login(c: Context<AppEnv>, raw: Record<string, string>, registrationId?: string) {
  const parsed = LoginParams.safeParse(raw);
  if (!parsed.success) throw validationError(fieldErrorsFromZod(parsed.error.issues));
  const { location, cookie } = await startLogin(c.env, parsed.data, new URL(c.req.url).origin, {
    requestId: c.get("requestId"),
    registrationId,
  });
  c.header("Set-Cookie", cookie);
  c.header("Cache-Control", "no-store");
  // A client that asks for JSON (one that follows the redirect itself) gets the URL as data.
  if (wantsJson(c)) return c.json({ redirect_url: location }, 200);
  return c.redirect(location, 302);
}

async function callback(c: Context<AppEnv>, registrationId?: string) {
  const fields = await readForm(c);
  const json = wantsJson(c);
  const outcome = await completeLaunch(
    c.env,
    fields,
    (state) => getCookie(c, STATE_COOKIE_PREFIX + state),
    new URL(c.req.url).origin,
    json ? "session" : "code",
    registrationId,
  );
  if (fields.state)
    c.header(
      "Set-Cookie",
      `${STATE_COOKIE_PREFIX}${fields.state}=; Path=/api/lti; Max-Age=0; Secure; HttpOnly; SameSite=None; Partitioned`,
    );
  c.header("Cache-Control", "no-store");
  if (outcome.session)
    return c.json(
      {
        launch: presentLaunch(outcome.launch),
        user: presentUser(outcome.user),
        session: outcome.session,
      },
      200,
    );
  const appUrl = config(c.env).lti.appUrl ?? `${new URL(c.req.url).origin}/api/lti/app`;
  return c.redirect(`${appUrl.split("#")[0]}#code=${encodeURIComponent(outcome.code)}`, 303);
}

export function registerLaunchRoutes(app: OpenAPIHono<AppEnv>) {
  for (const route of [
    loginGet,
    loginPost,
    registrationLoginGet,
    registrationLoginPost,
    callbackRoute,
    registrationCallbackRoute,
    appRoute,
  ])
    app.openAPIRegistry.registerPath(route);

  app.get(
    `${LTI}/login`,
    limit,
    answeringErrors((c) => login(c, c.req.query())),
  );
  app.post(
    `${LTI}/login`,
    limit,
    answeringErrors(async (c) => login(c, await readForm(c))),
  );
  app.get(
    `${LTI}/login/:id`,
    limit,
    answeringErrors((c) => login(c, c.req.query(), c.req.param("id"))),
  );
  app.post(
    `${LTI}/login/:id`,
    limit,
    answeringErrors(async (c) => login(c, await readForm(c), c.req.param("id"))),
  );

  app.post(
    `${LTI}/callback`,
    limit,
    answeringErrors((c) => callback(c)),
  );
  app.post(
    `${LTI}/callback/:id`,
    limit,
    answeringErrors((c) => callback(c, c.req.param("id"))),
  );

  app.openapi(sessionRoute, async (c) => {
    const outcome = await exchangeCode(c.env, c.req.valid("json").code);
    c.header("Cache-Control", "no-store");
    return c.json(
      { launch: presentLaunch(outcome.launch), user: presentUser(outcome.user), session: outcome.session },
      200,
    );
  });

  app.get(`${LTI}/app`, () => appPage());
}
