import type { z } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import { ltiConsumers, ltiStates } from "../../db/schema";
import type { Env } from "../../env";
import { randomBytes, toBase64Url } from "../../platform/crypto/encoding";
import { database } from "../../platform/db";
import { ApiError } from "../../platform/errors";
import { CALLBACK_PATH } from "./consumers";
import type { LoginParams } from "./schemas";

/** How long a login's state and nonce wait for the callback. */
export const STATE_TTL_MS = 10 * 60_000;
export const STATE_COOKIE_PREFIX = "lti_state_";

/** Whether a target_link_uri is this tool's launch URL (any query: `?course=` / `?lesson=` choose the target). */
export function isToolTarget(target: string, origin: string): boolean {
  try {
    const url = new URL(target);
    return url.origin === origin && url.pathname === CALLBACK_PATH;
  } catch {
    return false;
  }
}

function refuse(detail: string): ApiError {
  return new ApiError("bad_request", detail);
}

async function registrationFor(env: Env, issuer: string, clientId: string | undefined) {
  const db = database(env.DB);
  const rows = await db
    .select()
    .from(ltiConsumers)
    .where(
      clientId
        ? and(eq(ltiConsumers.issuer, issuer), eq(ltiConsumers.clientId, clientId))
        : eq(ltiConsumers.issuer, issuer),
    )
    .limit(2);
  const [row] = rows;
  if (!row)
    throw refuse(
      `No LTI registration for issuer ${issuer}${clientId ? ` and client id ${clientId}` : ""}; register the platform first.`,
    );
  if (rows.length > 1)
    throw refuse(
      `Several registrations share the issuer ${issuer}; the platform must send \`client_id\` with the login.`,
    );
  return row;
}

/**
 * Third-party initiated login: finds the registration, stores a single-use state and nonce for ten
 * minutes, and answers where to send the browser (the platform's OIDC authorization endpoint with
 * every parameter of an LTI authentication request) and the state cookie's value.
 */
export async function startLogin(env: Env, params: z.infer<typeof LoginParams>, origin: string) {
  const consumer = await registrationFor(env, params.iss, params.client_id);
  if (params.lti_deployment_id !== undefined && !consumer.deploymentIds.includes(params.lti_deployment_id))
    throw refuse(`The deployment id ${params.lti_deployment_id} is not registered for this platform.`);
  if (!isToolTarget(params.target_link_uri, origin))
    throw refuse(
      `The target_link_uri ${params.target_link_uri} is not this tool's launch URL (${origin}${CALLBACK_PATH}).`,
    );

  const state = toBase64Url(randomBytes(32));
  const nonce = toBase64Url(randomBytes(32));
  const browserBinding = toBase64Url(randomBytes(16));
  await database(env.DB)
    .insert(ltiStates)
    .values({
      state,
      nonce,
      consumerId: consumer.id,
      browserBinding,
      targetLinkUri: params.target_link_uri,
      expiresAt: Date.now() + STATE_TTL_MS,
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
    redirect_uri: origin + CALLBACK_PATH,
    login_hint: params.login_hint,
    state,
    nonce,
  };
  if (params.lti_message_hint !== undefined) query.lti_message_hint = params.lti_message_hint;
  for (const [name, value] of Object.entries(query)) redirect.searchParams.set(name, value);
  const cookie = `${STATE_COOKIE_PREFIX}${state}=${browserBinding}; Path=/api/lti; Max-Age=${STATE_TTL_MS / 1000}; Secure; HttpOnly; SameSite=None; Partitioned`;
  return { location: redirect.toString(), cookie };
}
