import type { z } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import { ltiConsumers, ltiStates } from "../../../db/schema";
import { randomBytes, toBase64Url } from "../../../platform/crypto/encoding";
import { ApiError } from "../../../platform/errors";
import type { ServiceContext } from "../../../platform/service/context";
import { enterInstitutionToWrite, findByDirectoryKey } from "../../../platform/service/directory";
import { clientKey } from "../registrations/directory-keys";
import { type ConsumerRow, registrationAnywhere } from "../registrations/service";
import { CALLBACK_PATH, registrationCallbackPath } from "../registrations/tool-urls";
import type { LoginParams } from "./schemas";

/** The registration a login's state names (`<registration id>.<random>`); null for a state that names none. */
export function registrationOfState(state: string): string | null {
  const dot = state.indexOf(".");
  return dot > 0 ? state.slice(0, dot) : null;
}

/** How long a login's state and nonce wait for the callback. */
export const STATE_TTL_MS = 10 * 60_000;
export const STATE_COOKIE_PREFIX = "lti_state_";
/**
 * Registrations of one issuer read at a login through the shared URL: enough to choose by deployment
 * id. When the login names no client id and the issuer has more registrations than this, they cannot
 * all be looked at, so the login is refused asking for `client_id` (not "deployment not registered").
 */
const MATCH_LIMIT = 100;

/**
 * Whether a target_link_uri is this tool's launch URL for the registration: its own
 * (`tool.launch_url`) or the shared one (any query: `?course=` / `?lesson=` choose the target).
 */
export function isToolTarget(target: string, origin: string, consumerId: string): boolean {
  try {
    const url = new URL(target);
    return (
      url.origin === origin &&
      (url.pathname === CALLBACK_PATH || url.pathname === registrationCallbackPath(consumerId))
    );
  } catch {
    return false;
  }
}

function refuse(detail: string): ApiError {
  return new ApiError("bad_request", detail);
}

/** The log line of a login or launch refused because registrations of several institutions match it (no secrets). */
export function warnAmbiguous(
  stage: "login" | "launch",
  fields: {
    requestId?: string;
    issuer: string;
    clientId?: string;
    deploymentId?: string;
    registrations: readonly { id: string; institutionId: string }[];
  },
): void {
  console.warn(
    JSON.stringify({
      level: "warn",
      message: `LTI ${stage} refused: more than one registration matches`,
      reason: "registration_ambiguous",
      request_id: fields.requestId ?? null,
      issuer: fields.issuer,
      client_id: fields.clientId ?? null,
      deployment_id: fields.deploymentId ?? null,
      registrations: fields.registrations.map((r) => ({ id: r.id, institution_id: r.institutionId })),
    }),
  );
}

/**
 * The registration a login is for: those of the issuer (and client id, when sent), narrowed to the
 * ones listing the login's deployment id (when sent). Two institutions may register the same
 * issuer and client id; when more than one is left the login is refused (`registration_ambiguous`)
 * and logged, so that no institution receives another's launches. The answer does not say whose.
 */
async function registrationFor(
  ctx: ServiceContext,
  issuer: string,
  clientId: string | undefined,
  deploymentId: string | undefined,
) {
  const { requestId } = ctx;
  const read = () =>
    ctx.db
      .select()
      .from(ltiConsumers)
      .where(
        clientId
          ? and(eq(ltiConsumers.issuer, issuer), eq(ltiConsumers.clientId, clientId))
          : eq(ltiConsumers.issuer, issuer),
      )
      .limit(MATCH_LIMIT + 1)
      .all();
  // None in DB: the (issuer, client id)'s directory key names the institution outside DB that holds
  // it (design/multi-database.md#entry-points); a login without client_id is looked up in DB only.
  const rows = clientId
    ? ((await findByDirectoryKey(ctx, "lti_client", clientKey(issuer, clientId), async () => {
        const found = await read();
        return found.length > 0 ? found : null;
      })) ?? [])
    : await read();
  // More rows than MATCH_LIMIT cannot all be looked at: without client_id the platform must send one;
  // with it (as many institutions registering one platform's pair) the login cannot be told apart.
  if (rows.length > MATCH_LIMIT) {
    if (!clientId)
      throw refuse(
        `Several registrations share the issuer ${issuer}; the platform must send \`client_id\` with the login.`,
      );
    throw ambiguous(requestId, issuer, clientId, deploymentId, rows);
  }
  if (rows.length === 0)
    throw refuse(
      `No LTI registration for issuer ${issuer}${clientId ? ` and client id ${clientId}` : ""}; register the platform first.`,
    );
  const candidates =
    deploymentId === undefined ? rows : rows.filter((row) => row.deploymentIds.includes(deploymentId));
  if (candidates.length === 0)
    throw refuse(`The deployment id ${deploymentId} is not registered for this platform.`);
  const [row] = candidates;
  if (candidates.length === 1 && row) return row;
  if (!clientId && new Set(candidates.map((c) => c.clientId)).size > 1)
    throw refuse(
      `Several registrations share the issuer ${issuer}; the platform must send \`client_id\` with the login.`,
    );
  throw ambiguous(requestId, issuer, clientId, deploymentId, candidates);
}

function ambiguous(
  requestId: string | undefined,
  issuer: string,
  clientId: string | undefined,
  deploymentId: string | undefined,
  registrations: readonly ConsumerRow[],
): ApiError {
  warnAmbiguous("login", { requestId, issuer, clientId, deploymentId, registrations });
  return new ApiError(
    "bad_request",
    `This login matches more than one registration of the platform${deploymentId === undefined ? " and names no `lti_deployment_id`" : ` for deployment ${deploymentId}`}; each registration must list only the deployment ids it serves, and the platform must send \`lti_deployment_id\` with the login (or use the registration's own \`tool.login_url\`).`,
    { extensions: { reason: "registration_ambiguous" } },
  );
}

/**
 * The registration a login through its own URL (`/api/lti/login/{id}`) is for: that one, whose issuer,
 * client id and (when sent) deployment id the login must carry. No other registration is looked at,
 * so another institution's registration of the same platform neither receives nor blocks it.
 */
async function namedRegistration(
  ctx: ServiceContext,
  registrationId: string,
  params: z.infer<typeof LoginParams>,
): Promise<ConsumerRow> {
  const row = await registrationAnywhere(ctx, registrationId);
  if (!row)
    throw refuse(
      `No LTI registration ${registrationId}; the login URL must be a registration's \`tool.login_url\`.`,
    );
  if (row.issuer !== params.iss)
    throw refuse(`The issuer ${params.iss} is not this registration's; check the login URL in the platform.`);
  if (params.client_id !== undefined && row.clientId !== params.client_id)
    throw refuse(
      `The client id ${params.client_id} is not this registration's; check the login URL in the platform.`,
    );
  if (params.lti_deployment_id !== undefined && !row.deploymentIds.includes(params.lti_deployment_id))
    throw refuse(`The deployment id ${params.lti_deployment_id} is not registered for this platform.`);
  return row;
}

/**
 * Third-party initiated login: finds the registration (the one the login URL names, else by issuer,
 * client id and deployment id), stores a single-use state and nonce for ten minutes (bound to the
 * registration's own callback after a login through its own URL, else to the shared one), and answers where to send the browser (the platform's OIDC authorization endpoint with
 * every parameter of an LTI authentication request) and the state cookie's value.
 */
export async function startLogin(
  ctx: ServiceContext,
  input: {
    params: z.infer<typeof LoginParams>;
    origin: string;
    registrationId?: string;
    /** The origin of the page that sent the login (its `Origin` or `Referer`), when it named one. */
    loginOrigin?: string;
  },
) {
  const { params, origin, registrationId } = input;
  const consumer =
    registrationId !== undefined
      ? await namedRegistration(ctx, registrationId, params)
      : await registrationFor(ctx, params.iss, params.client_id, params.lti_deployment_id);
  if (!isToolTarget(params.target_link_uri, origin, consumer.id))
    throw refuse(
      `The target_link_uri ${params.target_link_uri} is not this tool's launch URL (the registration's \`tool.launch_url\`).`,
    );

  // The state is written where the institution lives: refused while a move switches it over.
  await enterInstitutionToWrite(ctx, consumer.institutionId);
  // The state names its registration, so that the callback finds where it lives (as its own URL does).
  const state = `${consumer.id}.${toBase64Url(randomBytes(32))}`;
  const nonce = toBase64Url(randomBytes(32));
  const browserBinding = toBase64Url(randomBytes(16));
  await ctx.db
    .insert(ltiStates)
    .values({
      state,
      nonce,
      consumerId: consumer.id,
      browserBinding,
      targetLinkUri: params.target_link_uri,
      registrationBound: registrationId !== undefined,
      storageTarget: params.lti_storage_target || null,
      loginOrigin: input.loginOrigin ?? null,
      expiresAt: ctx.now() + STATE_TTL_MS,
      usedAt: null,
    })
    .run();

  const redirect = new URL(consumer.authLoginUrl);
  const query: Record<string, string> = {
    scope: "openid",
    response_type: "id_token",
    response_mode: "form_post",
    prompt: "none",
    client_id: consumer.clientId,
    // A login through a registration's own URL names its own redirect URI, which the platform accepts
    // only if it was configured with it; only that registration's callback redeems the state.
    redirect_uri:
      origin + (registrationId !== undefined ? registrationCallbackPath(consumer.id) : CALLBACK_PATH),
    login_hint: params.login_hint,
    state,
    nonce,
  };
  if (params.lti_message_hint !== undefined) query.lti_message_hint = params.lti_message_hint;
  for (const [name, value] of Object.entries(query)) redirect.searchParams.set(name, value);
  const cookie = `${STATE_COOKIE_PREFIX}${state}=${browserBinding}; Path=/api/lti; Max-Age=${STATE_TTL_MS / 1000}; Secure; HttpOnly; SameSite=None; Partitioned`;
  // A platform offering its storage (LTI Client Side postMessage) gets a page that keeps the state
  // and nonce in its frame before going on, for browsers that will not send the cookie back.
  const storage = !params.lti_storage_target
    ? null
    : {
        target: params.lti_storage_target,
        platformOrigin: new URL(consumer.authLoginUrl).origin,
        state,
        nonce,
        consumer,
        loginOrigin: input.loginOrigin ?? null,
      };
  return { location: redirect.toString(), cookie, storage };
}
