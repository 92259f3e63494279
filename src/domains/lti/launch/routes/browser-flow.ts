import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import type { AppEnv } from "../../../../env";
import { ApiError, fieldErrorsFromZod, toApiError, validationError } from "../../../../platform/errors";
import { jsonResponse } from "../../../../platform/openapi";
import { errorResponses, institutionMovingResponse } from "../../../../platform/openapi-problems";
import { limitByIp } from "../../../../platform/ratelimit/middleware";
import { IP_POLICIES } from "../../../../platform/ratelimit/policies";
import { presentUser } from "../../../auth/present";
import { LTI_DEEP_LINKING } from "../../prefixes";
import { completeLaunch } from "../complete-launch";
import { presentLaunch } from "../launch-log";
import { STATE_COOKIE_PREFIX, startLogin } from "../login";
import { errorPage, wantsJson } from "../pages";
import { pendingStorageCheck, storageCheckOf } from "../platform-storage";
import { LaunchResultSchema, LoginParams } from "../schemas";
import { httpOrigin, storageCallbackPage, storageLoginPage } from "../storage-pages";

/**
 * What the launch's browser-facing routes share: the login (the shared URL and a registration's
 * own, each by GET and by form post) and the callback (shared and a registration's own) answer the
 * same way, with errors as pages for browsers and problem+json for JSON clients.
 */

export const limit = limitByIp(IP_POLICIES.lti);
export const LIMIT_NOTE = `Limited to ${IP_POLICIES.lti.limit} requests per client IP per minute (with the login, the callback and the session exchange).`;

export const html = (description: string) => ({
  description,
  content: { "text/html": { schema: { type: "string" as const } } },
});
export const form = <T>(schema: T) => ({
  required: true,
  content: { "application/x-www-form-urlencoded": { schema } },
});

export const sharedLoginNote = `This is the shared login URL, the fallback for platforms that cannot be given a registration's own \`tool.login_url\` (\`/api/lti/login/{id}\`): Lingua finds the registration by \`iss\`, \`client_id\` and \`lti_deployment_id\` (an issuer with several registrations needs \`client_id\`: 400; when registrations of several institutions share the issuer and client id, \`lti_deployment_id\` must name a deployment only one of them lists, else 400 with \`reason\` \`registration_ambiguous\`, logged). Its \`redirect_uri\` is the shared \`/api/lti/callback\`.`;
export const boundLoginNote = `This is a registration's own login URL (its \`tool.login_url\`): the login goes to that registration only, whose issuer it must carry as \`iss\` and, when sent, client id as \`client_id\` and one of its deployment ids as \`lti_deployment_id\` (else 400; unknown registration: 400). Another institution's registration of the same platform is not looked at. Its \`redirect_uri\` is the registration's own callback \`/api/lti/callback/{id}\` (\`tool.redirect_uris\`), which the platform answers only when it was configured with it, and the launch posted there is validated against this registration alone.`;
export const loginDescription = (note: string) =>
  `Third-party initiated login (LTI 1.3 / OpenID Connect). The platform sends the browser here with \`iss\`, \`login_hint\`, \`target_link_uri\` and optionally \`client_id\`, \`lti_message_hint\`, \`lti_deployment_id\`, \`lti_storage_target\`. ${note} Lingua checks that \`target_link_uri\` is its launch URL (the registration's \`tool.launch_url\` or the shared \`/api/lti/callback\`), stores a single-use \`state\` and \`nonce\` for 10 minutes, and answers 302 to the platform's \`auth_login_url\` with \`scope=openid\`, \`response_type=id_token\`, \`response_mode=form_post\`, \`prompt=none\`, \`client_id\`, \`redirect_uri\`, \`login_hint\`, \`lti_message_hint\` (when sent), \`state\` and \`nonce\`. It also sets a state cookie (\`Secure; HttpOnly; SameSite=None; Partitioned\`), which binds the launch to this browser. When the login carries \`lti_storage_target\` (LTI Client Side postMessage, for browsers that block third-party cookies), a browser gets 200 with the platform-storage page instead of the 302: it stores the state and nonce in the platform's frame (\`lti.put_data\`, keys \`lti_state_<state>\` and \`lti_nonce_<nonce>\`, target origin the \`auth_login_url\`'s) and then goes to the same URL; the cookie is set as well. Errors are pages for browsers, problem+json for \`Accept: application/json\`. ${LIMIT_NOTE}`;

/**
 * An error the browser flow answers as a page for people: a browser (any `Accept` but JSON) gets
 * `text/html`, a client asking for `application/json` the problem. Errors answered before the
 * handler (the per-IP limit's 429, a body over the size limit) stay problem+json.
 */
function pageOrProblem(response: { description: string; content: Record<string, unknown> }) {
  return {
    ...response,
    description: `${response.description} Browsers (an \`Accept\` without \`application/json\`) get the error as an HTML page that says what went wrong and what to tell the platform's administrator; \`Accept: application/json\` gets the problem.`,
    content: { ...response.content, ...html("").content },
  };
}

export const loginResponses = {
  200: {
    description:
      "With `Accept: application/json`: where to send the browser (the same URL as the 302's `Location`; the state cookie is set as well, and the callback needs it back). A browser whose login carries `lti_storage_target`: the platform-storage page (`text/html`; strict CSP, its one script allowed by hash; framed only by the platform: the registration's issuer and `auth_login_url` origins, their parent domain's hosts, and the origin that sent the login).",
    content: {
      ...jsonResponse(z.object({ redirect_url: z.string() }).openapi("LtiLoginRedirect"), "").content,
      ...html("").content,
    },
  },
  302: {
    description: "To the platform's OIDC authorization endpoint.",
    headers: {
      Location: { schema: { type: "string" as const } },
      "Set-Cookie": { schema: { type: "string" as const }, description: "`lti_state_<state>`, 10 minutes." },
    },
  },
  400: pageOrProblem({
    ...errorResponses[400],
    description:
      "Unknown registration, deployment or target_link_uri; or a login several registrations match (`reason` `registration_ambiguous`).",
  }),
  422: pageOrProblem(errorResponses[422]),
  500: pageOrProblem(errorResponses[500]),
  503: pageOrProblem(institutionMovingResponse),
};

/** The login by form post: a body that is not a form is 415, a page for browsers too. */
export const formLoginResponses = {
  ...loginResponses,
  415: pageOrProblem({
    ...errorResponses[415],
    description: "The body is not `application/x-www-form-urlencoded` (or `multipart/form-data`).",
  }),
};

export const sharedCallbackNote =
  "This is the shared callback, the redirect URI of the shared login `/api/lti/login` (the fallback): it redeems only states of that login.";
export const boundCallbackNote =
  "This is a registration's own callback, its `tool.redirect_uris` and `tool.launch_url`: a login through the registration's own `tool.login_url` names it as `redirect_uri`, which the platform answers only when it was configured with it, and it redeems only the states of such logins of that registration (the id_token is validated against that registration alone: its `jwks_url`, issuer, client id and deployments).";
export const callbackDescription = (note: string) =>
  `The platform's browser posts \`id_token\` and \`state\` here. ${note} Checked in this order, the first failure refusing the launch with \`reason\`: \`state\` known (\`state_unknown\`), issued for this callback (\`state_wrong_callback\`; not spent), unused and unexpired (\`state_used\`, \`state_expired\`); the state cookie, when sent, is the login's (\`state_cookie_mismatch\`); the platform's \`error\` (\`platform_error\`); bound to the browser that started the login, by the state cookie or else by the platform-storage check (\`browser_binding_missing\`: neither; \`platform_storage_failed\`: Lingua's page could not read the values back; \`platform_storage_mismatch\`: they are not the login's); the header's \`alg\` is RS256 (\`alg_not_allowed\`) and its \`kid\` in the platform's JWKS, fetched again once when unknown (\`kid_unknown\`; \`jwks_unavailable\` is 502); signature (\`signature_invalid\`); \`iss\` (\`issuer_mismatch\`); \`aud\` and \`azp\` (\`audience_mismatch\`, \`azp_mismatch\`); \`exp\`/\`iat\` with 60 s of skew (\`token_expired\`, \`token_not_yet_valid\`); \`nonce\` (\`nonce_mismatch\`); deployment (\`deployment_unknown\`) and, after the shared login only, listed by no other registration of the issuer and client id (\`registration_ambiguous\`, logged); version 1.3.0 (\`version_unsupported\`); message type \`LtiResourceLinkRequest\` or \`LtiDeepLinkingRequest\` (\`message_type_unsupported\`); \`sub\`, \`roles\` and, for a resource link, \`resource_link.id\`, for deep linking \`deep_linking_settings\` with \`deep_link_return_url\`, \`accept_types\` and \`accept_presentation_document_targets\` (\`claim_missing\`; a return URL that is not absolute https: \`claim_invalid\`); \`target_link_uri\` (\`target_link_uri_foreign\`); the course or lesson it names exists (\`target_unknown\`); the person is not a suspended member (\`member_suspended\`) and, when new, finds a free seat (\`seats_exhausted\`). A refused launch records only a launch-log entry (\`launch_id\` in the problem).\n\nBrowser binding (login CSRF): a launch without the login's state cookie is refused unless it is bound through the platform's storage. When the login carried \`lti_storage_target\` and the browser sent no cookie, the platform's post answers 200 with the platform-storage page (the state is not spent): it reads the state and nonce back from the platform's frame (\`lti.get_data\`) and posts \`id_token\`, \`state\` and \`platform_storage_state\` / \`platform_storage_nonce\` (or \`platform_storage_error\`) to this URL again, from Lingua's origin; only that post (\`Origin\` this API's, \`Sec-Fetch-Site: same-origin\` when sent) counts as the check. A JSON client sends the cookie of its login back (\`Cookie: lti_state_<state>=…\`).\n\nAccepted: the person is found or created by (registration, \`sub\`) as a member of the registration's institution, the launch is recorded, and \`Accept: application/json\` answers 200 with a session token (8 hours, the abilities of the launch's role except \`tokens:write\`: a launch session cannot mint API tokens). A browser gets 303 to the learning app (\`LTI_APP_URL\`, or the worker's page \`/api/lti/app\`) with \`#code=…\` in the fragment, exchanged at \`POST /api/lti/session\`; a deep-linking launch (\`kind\` \`deep_linking\`) goes to the worker's selection page \`/api/lti/deep-linking/{launch}/select?institution={its institution}\` instead, and its session may list \`GET /api/lti/deep-linking/{launch}/items\` and build \`POST /api/lti/deep-linking/{launch}/response\`. ${LIMIT_NOTE}`;

export const callbackResponses = {
  200: {
    description:
      "The launch, its user and a session (`Accept: application/json`). A browser without the state cookie after a login that carried `lti_storage_target`: the platform-storage page (`text/html`), which posts the launch back with the values it read.",
    content: {
      ...jsonResponse(LaunchResultSchema, "").content,
      ...html("").content,
    },
  },
  303: {
    description: "Browsers: to the learning app, the code in the URL fragment.",
    headers: { Location: { schema: { type: "string" as const } } },
  },
  400: pageOrProblem({
    ...errorResponses[400],
    description:
      "Launch refused: `code` `lti_launch_refused`, `reason` (see above) and `launch_id` (the log entry).",
  }),
  415: pageOrProblem({
    ...errorResponses[415],
    description: "The body is not `application/x-www-form-urlencoded` (or `multipart/form-data`).",
  }),
  422: pageOrProblem(errorResponses[422]),
  500: pageOrProblem(errorResponses[500]),
  503: pageOrProblem(institutionMovingResponse),
  502: pageOrProblem({
    ...errorResponses[400],
    description: "The platform's key set could not be fetched (`reason` `jwks_unavailable`).",
  }),
};

export async function readForm(c: Context): Promise<Record<string, string>> {
  const type = c.req.header("Content-Type") ?? "";
  if (!/^application\/x-www-form-urlencoded|^multipart\/form-data/i.test(type))
    throw new ApiError("unsupported_media_type", "Send the form as `application/x-www-form-urlencoded`.");
  const body = await c.req.parseBody();
  return Object.fromEntries(
    Object.entries(body).filter((e): e is [string, string] => typeof e[1] === "string"),
  );
}

/** Errors as problem+json for clients asking for JSON, as pages for browsers. */
export function answeringErrors(handler: (c: Context<AppEnv>) => Promise<Response>) {
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

/** The origin of the page that sent this request: its `Origin` header (unless `null`), else its `Referer`'s. */
function senderOrigin(c: Context): string | null {
  return httpOrigin(c.req.header("Origin")) ?? httpOrigin(c.req.header("Referer"));
}

/**
 * Whether a page of this API's own origin posted the request: `Origin` is ours (the storage page asks
 * for it with its referrer policy) and, when the browser sends it, `Sec-Fetch-Site` is
 * `same-origin`. Browsers set both; a page of another site cannot.
 */
function fromOwnPage(c: Context, origin: string): boolean {
  const site = c.req.header("Sec-Fetch-Site");
  return c.req.header("Origin") === origin && (site === undefined || site === "same-origin");
}

export async function login(c: Context<AppEnv>, raw: Record<string, string>, registrationId?: string) {
  const parsed = LoginParams.safeParse(raw);
  if (!parsed.success) throw validationError(fieldErrorsFromZod(parsed.error.issues));
  const { location, cookie, storage } = await startLogin(c.get("ctx"), {
    params: parsed.data,
    origin: new URL(c.req.url).origin,
    registrationId,
    loginOrigin: senderOrigin(c) ?? undefined,
  });
  c.header("Set-Cookie", cookie);
  c.header("Cache-Control", "no-store");
  // A client that asks for JSON (one that follows the redirect itself) gets the URL as data.
  if (wantsJson(c)) return c.json({ redirect_url: location }, 200);
  if (storage) {
    // The platform offers its storage: a page keeps the state and nonce there, then redirects.
    const page = await storageLoginPage({ ...storage, next: location });
    page.headers.append("Set-Cookie", cookie);
    return page;
  }
  return c.redirect(location, 302);
}

export async function callback(c: Context<AppEnv>, registrationId?: string) {
  const fields = await readForm(c);
  const json = wantsJson(c);
  const ctx = c.get("ctx");
  const origin = new URL(c.req.url).origin;
  const stateCookie = (state: string) => getCookie(c, STATE_COOKIE_PREFIX + state);
  const storage = storageCheckOf(fields, fromOwnPage(c, origin));
  // The platform's post of a login that offered its storage, from a browser that sent no cookie:
  // the state stays unspent, and a page reads the state and nonce back from the platform's frame
  // and posts the launch here again with them.
  if (!json && fields.state && fields.id_token && !fields.error && !storage && !stateCookie(fields.state)) {
    const pending = await pendingStorageCheck(ctx, { state: fields.state, registrationId });
    if (pending?.state.storageTarget) {
      const appUrl = ctx.config.lti.appUrl;
      return storageCallbackPage({
        target: pending.state.storageTarget,
        platformOrigin: new URL(pending.consumer.authLoginUrl).origin,
        state: pending.state.state,
        nonce: pending.state.nonce,
        consumer: pending.consumer,
        loginOrigin: pending.state.loginOrigin,
        action: c.req.path,
        idToken: fields.id_token,
        appOrigin: appUrl ? httpOrigin(appUrl) : null,
      });
    }
  }
  const outcome = await completeLaunch(ctx, {
    form: fields,
    stateCookie,
    storage,
    origin,
    answer: json ? "session" : "code",
    registrationId,
  });
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
  // A deep-linking launch always goes to the worker's selection page; others to the learning app.
  const appUrl =
    outcome.launch.kind === "deep_linking"
      ? `${origin}${LTI_DEEP_LINKING}/${encodeURIComponent(outcome.launch.id)}/select${
          // The page reads the launch where its institution lives (design/multi-database.md#entry-points).
          outcome.launch.institutionId
            ? `?institution=${encodeURIComponent(outcome.launch.institutionId)}`
            : ""
        }`
      : (ctx.config.lti.appUrl ?? `${origin}/api/lti/app`);
  return c.redirect(`${appUrl.split("#")[0]}#code=${encodeURIComponent(outcome.code)}`, 303);
}
