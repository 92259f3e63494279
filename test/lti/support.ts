import { env } from "cloudflare:test";
import { and, eq, like } from "drizzle-orm";
import { inject } from "vitest";
import { ltiConsumers, outboundAccessTokens } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { BASE, call, callJson } from "../helpers/api";
import { freshIp, type TestUser } from "../helpers/tenants";
import type { ConfigurationRequest, RegistrationRequest } from "./platform-registration";
import type { AuthorizeRequest, ScoreRequest, ScriptedAnswer, TokenRequest } from "./platform-server";

export const CALLBACK_URL = `${BASE}/api/lti/callback`;
export const LTI = "https://purl.imsglobal.org/spec/lti/claim/";
export const AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint";
export const NRPS_CLAIM = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice";
export const SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score";
export const LEARNER_ROLE = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner";
export const INSTRUCTOR_ROLE = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor";

export interface PlatformState {
  issuer: string;
  auth_login_url: string;
  auth_token_url: string;
  jwks_url: string;
  lineitems: string;
  kid: string;
  token_requests: TokenRequest[];
  score_requests: ScoreRequest[];
  /** Every access token the platform's token endpoint issued. */
  issued_tokens: string[];
  jwks_fetches: number;
  /** The OIDC authentication requests the platform's authorization endpoint answered. */
  authorize_requests: AuthorizeRequest[];
}

/** One platform of the loopback simulator (test/lti/platform-server.ts), by a fresh name. */
export function platformSimulator(name = crypto.randomUUID()) {
  const control = `${inject("ltiPlatformUrl")}/control/${name}`;
  const put = async (body: Record<string, unknown>) =>
    (await (await fetch(control, { method: "PUT", body: JSON.stringify(body) })).json()) as PlatformState;
  /** The tool JWKS URL `learnToolKeys` reads by default: that of the registration registerPlatform made. */
  let toolJwksUrl: string | null = null;
  return {
    name,
    configure: put,
    useToolJwksUrl(url: string) {
      toolJwksUrl = url;
    },
    state: async () => (await (await fetch(control)).json()) as PlatformState,
    /** An id_token signed by the platform (`mode`: rs256, none, hs256-public, unknown-key, wrong-signature). */
    async idToken(payload: Record<string, unknown>, mode = "rs256", header: Record<string, unknown> = {}) {
      const res = await fetch(`${control}/id-token`, {
        method: "POST",
        body: JSON.stringify({ payload, mode, header }),
      });
      return ((await res.json()) as { id_token: string }).id_token;
    },
    /** A new platform key becomes the one it signs with (the old stays in its JWKS). */
    async rotate() {
      return ((await (await fetch(`${control}/rotate`, { method: "POST" })).json()) as { kid: string }).kid;
    },
    /**
     * Configures the platform with a tool JWKS URL (a registration's `tool.jwks_url`) and the key set
     * found there now, as an LMS reads it: its token endpoint verifies client assertions with it.
     * Without a registration, that of the registration registerPlatform made for this platform.
     */
    async learnToolKeys(consumer?: { tool: { jwks_url: string } }) {
      const url = consumer?.tool.jwks_url ?? toolJwksUrl;
      if (!url) throw new Error("no tool JWKS URL for this platform");
      const { res, body } = await callJson(url);
      if (res.status !== 200) throw new Error(`tool JWKS ${url}: ${res.status}`);
      await put({ tool_jwks: body, tool_jwks_url: url });
    },
    scores: async (script: ScriptedAnswer[]) => put({ score_script: script }),
  };
}

export type Simulator = ReturnType<typeof platformSimulator>;

/** A platform on the simulator and its registration in the admin's institution. */
export async function registerPlatform(admin: TestUser, extra: Record<string, unknown> = {}) {
  const platform = platformSimulator();
  const clientId = `client-${crypto.randomUUID()}`;
  const urls = await platform.configure({ client_id: clientId });
  const deploymentId = `dep-${crypto.randomUUID()}`;
  const { res, body } = await callJson("/api/integrations/lti-consumers", {
    token: admin.token,
    body: {
      name: "Test LMS",
      issuer: urls.issuer,
      client_id: clientId,
      deployment_ids: [deploymentId],
      auth_login_url: urls.auth_login_url,
      auth_token_url: urls.auth_token_url,
      jwks_url: urls.jwks_url,
      ...extra,
    },
  });
  if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${JSON.stringify(body)}`);
  platform.useToolJwksUrl(body.tool.jwks_url);
  // As an LMS administrator does: the registration's redirect URIs are the only ones the platform answers.
  await platform.configure({ redirect_uris: body.tool.redirect_uris });
  return { platform, consumer: body, clientId, deploymentId, urls };
}

export type Registered = Awaited<ReturnType<typeof registerPlatform>>;

/**
 * The browser's cookie jar, as far as launches go: each login's state cookie (`lti_state_<state>=…`)
 * by state, which `postCallback` sends back with that state's callback, as the browser that made the
 * login does. A callback without it must be bound through the platform's storage.
 */
const stateCookies = new Map<string, string>();

/** The `name=value` of a login's state cookie (its `Set-Cookie` without attributes). */
export function stateCookieOf(setCookie: string | null): string | undefined {
  return setCookie?.split(";")[0];
}

/**
 * Third-party initiated login; the tool's 302 parsed. Through the shared login URL unless `loginUrl`
 * is given (a registration's `tool.login_url`).
 */
export async function login(
  reg: Registered,
  params: Record<string, string> = {},
  ip = freshIp(),
  loginUrl = "/api/lti/login",
) {
  const query = new URLSearchParams({
    iss: reg.urls.issuer,
    login_hint: "hint-42",
    target_link_uri: CALLBACK_URL,
    client_id: reg.clientId,
    lti_message_hint: "msg-hint",
    ...params,
  });
  const res = await call(`${loginUrl}?${query}`, { headers: { "CF-Connecting-IP": ip } });
  const location = res.headers.get("Location");
  const redirect = location ? new URL(location) : null;
  const state = redirect?.searchParams.get("state") ?? "";
  const cookie = stateCookieOf(res.headers.get("Set-Cookie"));
  if (state && cookie) stateCookies.set(state, cookie);
  return {
    res,
    redirect,
    state,
    nonce: redirect?.searchParams.get("nonce") ?? "",
    cookie: res.headers.get("Set-Cookie"),
  };
}

/** The claims of a valid resource-link launch, to override per test. */
export function launchClaims(
  reg: Registered,
  nonce: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return {
    iss: reg.urls.issuer,
    aud: reg.clientId,
    sub: `user-${crypto.randomUUID()}`,
    iat: now,
    exp: now + 300,
    nonce,
    name: "Ada Lovelace",
    given_name: "Ada",
    family_name: "Lovelace",
    email: `ada.${crypto.randomUUID()}@lms.example`,
    [`${LTI}deployment_id`]: reg.deploymentId,
    [`${LTI}version`]: "1.3.0",
    [`${LTI}message_type`]: "LtiResourceLinkRequest",
    [`${LTI}roles`]: [LEARNER_ROLE],
    [`${LTI}resource_link`]: { id: "rl-1", title: "Week 1: greetings" },
    [`${LTI}context`]: { id: "ctx-1", label: "SPAN101", title: "Spanish for beginners" },
    [`${LTI}target_link_uri`]: CALLBACK_URL,
    [`${LTI}custom`]: { section: "A" },
    [AGS_CLAIM]: {
      scope: [SCORE_SCOPE, "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly"],
      lineitems: reg.urls.lineitems,
      lineitem: `${reg.urls.lineitems}/li-1`,
    },
    ...overrides,
  };
}

/**
 * Posts the form the platform's browser page would post to the callback: the shared one unless `url`
 * is given (a registration's `tool.redirect_uris[0]`, or the login's `redirect_uri`). The browser's
 * state cookie of `form.state` goes with it, as from the browser that made the login, unless
 * `cookie` says otherwise (a value to send instead, or `false`: none, as a browser blocking
 * third-party cookies or another browser).
 */
export function postCallback(
  form: Record<string, string>,
  options: {
    json?: boolean;
    cookie?: string | false;
    ip?: string;
    url?: string;
    headers?: Record<string, string>;
  } = {},
) {
  const headers: Record<string, string> = {
    "Content-Type": "application/x-www-form-urlencoded",
    "CF-Connecting-IP": options.ip ?? freshIp(),
    Accept: options.json === false ? "text/html,application/xhtml+xml" : "application/json",
    ...options.headers,
  };
  const cookie = options.cookie ?? (form.state ? stateCookies.get(form.state) : undefined);
  if (cookie) headers.Cookie = cookie;
  return call(options.url ?? "/api/lti/callback", {
    method: "POST",
    headers,
    rawBody: new URLSearchParams(form).toString(),
  });
}

/** Login, an id_token with these claims, callback: the launch as JSON. */
export async function launch(reg: Registered, overrides: Record<string, unknown> = {}) {
  const { state, nonce } = await login(reg);
  const idToken = await reg.platform.idToken(launchClaims(reg, nonce, overrides));
  const res = await postCallback({ id_token: idToken, state });
  const body = (await res.json()) as any;
  return { res, body, state, nonce, idToken };
}

/**
 * What the platform's authorization endpoint answers to a login's redirect, as the signed-in user's
 * browser follows it: 200 with the form_post (`action`, `fields`) of an id_token carrying `claims`,
 * or the platform's refusal (a redirect_uri not configured for the client).
 */
export async function authorize(platform: Simulator, redirect: URL, claims: Record<string, unknown>) {
  await platform.configure({ launch_claims: claims });
  const res = await fetch(redirect);
  return {
    status: res.status,
    body: (await res.json()) as {
      action?: string;
      fields?: Record<string, string>;
      error?: string;
      error_description?: string;
    },
  };
}

/**
 * A launch as a browser makes it: the login at `loginUrl` (a registration's `tool.login_url` by
 * default), the platform's authorization endpoint (which checks the redirect_uri), and the form post
 * to where it sends it. `callback` is null when the login or the platform refused.
 */
export async function launchThroughPlatform(
  reg: Registered,
  options: { loginUrl?: string; claims?: Record<string, unknown>; params?: Record<string, string> } = {},
) {
  const started = await login(
    reg,
    options.params,
    undefined,
    options.loginUrl ?? reg.consumer.tool.login_url,
  );
  if (started.res.status !== 302 || !started.redirect)
    return { started, authorized: null, res: null, body: null };
  const authorized = await authorize(reg.platform, started.redirect, {
    ...launchClaims(reg, ""),
    ...options.claims,
  });
  if (authorized.status !== 200 || !authorized.body.action || !authorized.body.fields)
    return { started, authorized, res: null, body: null };
  const res = await postCallback(authorized.body.fields, { url: authorized.body.action });
  return { started, authorized, res, body: (await res.json()) as any };
}

// ---------------------------------------------------------------------------------------------
// Deep linking (the simulator's side: platform-deep-linking.ts)

export const DL_SETTINGS_CLAIM = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings";
export const DL_CONTENT_ITEMS_CLAIM = "https://purl.imsglobal.org/spec/lti-dl/claim/content_items";
export const DL_DATA_CLAIM = "https://purl.imsglobal.org/spec/lti-dl/claim/data";

/** The platform's deep-linking return URL and what it received there (each post judged). */
export async function deepLinkingState(
  platform: Simulator,
  expect?: { deployment_id: string; data?: unknown },
) {
  const res = await fetch(`${inject("ltiPlatformUrl")}/control/${platform.name}/deep-linking`, {
    method: expect ? "PUT" : "GET",
    ...(expect ? { body: JSON.stringify({ expect }) } : {}),
  });
  return (await res.json()) as {
    return_url: string;
    returns: import("./platform-deep-linking").DeepLinkingReturn[];
  };
}

/**
 * The claims of an instructor's LtiDeepLinkingRequest (no resource_link), its settings returning to
 * the simulator's return URL; `settings` overrides single settings.
 */
export function deepLinkingClaims(
  reg: Registered,
  nonce: string,
  returnUrl: string,
  settings: Record<string, unknown> = {},
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  const { [`${LTI}resource_link`]: _link, ...claims } = launchClaims(reg, nonce, {
    [`${LTI}message_type`]: "LtiDeepLinkingRequest",
    [`${LTI}roles`]: [INSTRUCTOR_ROLE],
  });
  return {
    ...claims,
    [DL_SETTINGS_CLAIM]: {
      deep_link_return_url: returnUrl,
      accept_types: ["ltiResourceLink"],
      accept_presentation_document_targets: ["iframe", "window"],
      accept_multiple: true,
      accept_lineitem: true,
      title: "Add Lingua content",
      data: `csrf-${crypto.randomUUID()}`,
      ...settings,
    },
    ...overrides,
  };
}

// ——— The platform token cache as LTI uses it (holder `lti:<registration id>`) ———

/** Rows of the token cache of a registration: every version, or (usable) only the registration's current one. */
export async function cachedTokens(consumerId: string, which: "usable" | "any" = "usable"): Promise<number> {
  const db = database(env.DB);
  const holder = eq(outboundAccessTokens.holder, `lti:${consumerId}`);
  if (which === "any") return db.$count(outboundAccessTokens, holder);
  const consumer = await db
    .select({ version: ltiConsumers.credentialsVersion })
    .from(ltiConsumers)
    .where(eq(ltiConsumers.id, consumerId))
    .get();
  if (!consumer) return 0;
  return db.$count(outboundAccessTokens, and(holder, eq(outboundAccessTokens.version, consumer.version)));
}

/** Empties the token cache of a registration (or of every registration). */
export async function forgetTokens(consumerId?: string): Promise<void> {
  await database(env.DB)
    .delete(outboundAccessTokens)
    .where(
      consumerId
        ? eq(outboundAccessTokens.holder, `lti:${consumerId}`)
        : like(outboundAccessTokens.holder, "lti:%"),
    );
}

// ——— LTI Advantage services of the simulator (platform-services.ts) ———

export const NRPS_SCOPE = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly";
export const LINE_ITEM_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem";

export interface ServicesState {
  context_memberships_url: string;
  service_requests: import("./platform-services").ServiceRequest[];
  line_items: Record<string, any>[];
}

/** The platform's state with its services' part. */
export async function servicesState(platform: Simulator): Promise<PlatformState & ServicesState> {
  return (await platform.state()) as PlatformState & ServicesState;
}

/** A member of an NRPS roster as a platform lists it. */
export function rosterMember(userId: string, extra: Record<string, unknown> = {}) {
  return {
    user_id: userId,
    name: `Member ${userId}`,
    email: `${userId}@lms.example`,
    roles: [LEARNER_ROLE],
    status: "Active",
    ...extra,
  };
}

// ——— Dynamic registration (test/lti/platform-registration.ts) ———

export const LINKS = "/api/integrations/lti-consumers/registration-links";

export interface RegistrationControl {
  openid_configuration: string;
  registration_token: string | null;
  configuration_requests: ConfigurationRequest[];
  registration_requests: RegistrationRequest[];
}

/** The simulator's dynamic registration (test/lti/platform-registration.ts) of one platform. */
export function registrationOf(platform: Simulator) {
  const control = `${inject("ltiPlatformUrl")}/control/${platform.name}/registration`;
  return {
    async script(body: {
      token?: string | null;
      configuration?: Record<string, unknown>;
      answers?: ScriptedAnswer[];
      deployment_id?: string | null;
    }) {
      const res = await fetch(control, { method: "PUT", body: JSON.stringify(body) });
      return (await res.json()) as RegistrationControl;
    },
    state: async () => (await (await fetch(control)).json()) as RegistrationControl,
  };
}

export async function newLink(admin: TestUser, headers: Record<string, string> = {}) {
  const { res, body } = await callJson(LINKS, { token: admin.token, method: "POST", headers });
  if (res.status !== 201) throw new Error(`link: ${res.status} ${JSON.stringify(body)}`);
  return body as { url: string; expires_at: string };
}

/** What the LMS does with the link: opens it in its iframe with its two parameters added. */
export async function open(linkUrl: string, params: Record<string, string>) {
  const url = new URL(linkUrl);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  const res = await call(url.toString(), {
    headers: { Accept: "text/html,application/xhtml+xml", "CF-Connecting-IP": freshIp() },
  });
  return { res, text: await res.text() };
}
