import type { xapiEndpoints } from "../../db/schema";
import { xapiSecretBinding } from "../../platform/crypto/sealed-values";
import { unseal } from "../../platform/crypto/sealing";
import { type OutboundResult, outboundFetch } from "../../platform/outbound";
import {
  type AccessTokenKey,
  accessToken,
  forgetAccessToken,
  type HeldToken,
} from "../../platform/outbound/access-tokens";
import type { ServiceContext } from "../../platform/service/context";

export type EndpointRow = typeof xapiEndpoints.$inferSelect;

export interface LrsRequest {
  method: "GET" | "POST";
  /** Below the endpoint's base URL: `about`, `statements`. */
  path: "about" | "statements";
  query?: Record<string, string>;
  /** JSON text. */
  body?: string;
  /** Bytes of the answer to keep (default 1 KiB). */
  bodyLimit?: number;
  /** False: send no credentials (the About resource, which any client may read). Default true. */
  credentials?: boolean;
}

/**
 * What an LRS request came to. `stage: "token"` when the OAuth 2 token request failed and the LRS
 * was not called: then `status` is null (the LRS did not answer; the token endpoint's status is
 * `tokenStatus` and in `error`), so a caller treats it as an outage of the LRS, never as the LRS's
 * verdict on a batch.
 */
export interface LrsResult extends OutboundResult {
  stage: "token" | "lrs";
  /** The token endpoint's HTTP status, when the token request got an answer. */
  tokenStatus?: number | null;
}

/** The token endpoint's answer kept (a JWT access token can be a few KiB). */
const TOKEN_BODY_LIMIT = 16 * 1024;

/** The access-token cache's holder name of an endpoint. */
export function tokenHolder(endpointId: string): string {
  return `xapi:${endpointId}`;
}

function tokenKey(endpoint: EndpointRow): AccessTokenKey {
  return {
    holder: tokenHolder(endpoint.id),
    scope: endpoint.scope ?? "",
    version: endpoint.credentialsVersion,
  };
}

function openSecret(ctx: ServiceContext, endpoint: EndpointRow): Promise<string> {
  return unseal(endpoint.secretSealed, ctx.config.encryptionKey, xapiSecretBinding(endpoint.id));
}

/** RFC 6749 §2.3.1: client id and secret form-encoded, then Basic. */
function clientBasic(clientId: string, secret: string): string {
  const enc = (value: string) => encodeURIComponent(value).replace(/%20/g, "+");
  return `Basic ${btoa(`${enc(clientId)}:${enc(secret)}`)}`;
}

function utf8Basic(username: string, secret: string): string {
  const bytes = new TextEncoder().encode(`${username}:${secret}`);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return `Basic ${btoa(binary)}`;
}

type TokenFailure = Omit<LrsResult, "stage">;

/**
 * The client-credentials grant (RFC 6749 §4.4) at the endpoint's token URL, through the outbound
 * gate, the client authenticated by `client_secret_basic`. Never logs or answers the secret or token.
 */
async function requestToken(
  ctx: ServiceContext,
  endpoint: EndpointRow,
): Promise<{ token: string; expiresInSeconds: number | null } | { failure: TokenFailure }> {
  const tokenUrl = endpoint.tokenUrl ?? "";
  const form = new URLSearchParams({ grant_type: "client_credentials" });
  if (endpoint.scope) form.set("scope", endpoint.scope);
  const result = await outboundFetch(
    ctx.env,
    tokenUrl,
    {
      method: "POST",
      headers: {
        Authorization: clientBasic(endpoint.clientId ?? "", await openSecret(ctx, endpoint)),
        "Content-Type": "application/x-www-form-urlencoded",
        Accept: "application/json",
      },
      body: form.toString(),
    },
    {
      timeoutMs: ctx.config.webhooks.timeoutMs,
      bodyLimit: TOKEN_BODY_LIMIT,
      log: { caller: "xapi-token", endpoint_id: endpoint.id },
    },
  );
  const fail = (error: string): { failure: TokenFailure } => ({
    failure: {
      ...result,
      ok: false,
      status: null,
      headers: null,
      // The token endpoint's answer may echo what it was sent: never kept.
      bodyPrefix: null,
      errorCode: result.errorCode ?? "http_status",
      error: `Token request: ${error}`,
      tokenStatus: result.status,
    },
  });
  if (!result.ok) {
    const detail = oauthError(result.bodyPrefix);
    return fail(`${result.error ?? "failed"}${detail ? ` (${detail})` : ""}`);
  }
  let body: { access_token?: unknown; token_type?: unknown; expires_in?: unknown };
  try {
    body = JSON.parse(result.bodyPrefix ?? "");
  } catch {
    return fail("the answer is not JSON");
  }
  if (typeof body.access_token !== "string" || body.access_token === "")
    return fail("the answer has no access_token");
  if (typeof body.token_type === "string" && body.token_type.toLowerCase() !== "bearer")
    return fail(`token_type ${JSON.stringify(body.token_type.slice(0, 40))} is not Bearer`);
  const expiresIn = Number(body.expires_in);
  return {
    token: body.access_token,
    expiresInSeconds: Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : null,
  };
}

/** An OAuth 2 error answer's `error` code (RFC 6749 §5.2), which says nothing secret. */
function oauthError(text: string | null): string | null {
  try {
    const error = (JSON.parse(text ?? "") as { error?: unknown }).error;
    return typeof error === "string" && /^[\x20-\x7e]{1,64}$/.test(error) ? error : null;
  } catch {
    return null;
  }
}

function send(
  ctx: ServiceContext,
  endpoint: EndpointRow,
  request: LrsRequest,
  authorization: string | null,
): Promise<OutboundResult> {
  const url = new URL(request.path, endpoint.endpoint);
  for (const [name, value] of Object.entries(request.query ?? {})) url.searchParams.set(name, value);
  const headers: Record<string, string> = {
    "X-Experience-API-Version": endpoint.version,
    Accept: "application/json",
  };
  if (authorization) headers.Authorization = authorization;
  if (request.body !== undefined) headers["Content-Type"] = "application/json";
  return outboundFetch(
    ctx.env,
    url.toString(),
    { method: request.method, headers, body: request.body },
    {
      timeoutMs: ctx.config.webhooks.timeoutMs,
      bodyLimit: request.bodyLimit,
      log: { caller: "xapi", endpoint_id: endpoint.id },
    },
  );
}

/**
 * One request to an endpoint's LRS through the outbound gate (the URL judged again before every
 * request), with the endpoint's `X-Experience-API-Version` and credentials, read from the row at the
 * time of the request, so a change applies to the very next one.
 *
 * Basic: the user name and password. OAuth 2: a Bearer token of the client-credentials grant,
 * cached across isolates per endpoint and credentials version (platform/outbound/access-tokens.ts).
 * A 401 answered to a cached token forgets it and the request is made once more with a new token;
 * a 401 to a token just obtained is the LRS's answer. A failed token request answers `stage:
 * "token"` without calling the LRS.
 */
export async function lrsRequest(
  ctx: ServiceContext,
  endpoint: EndpointRow,
  request: LrsRequest,
): Promise<LrsResult> {
  if (request.credentials === false) return { ...(await send(ctx, endpoint, request, null)), stage: "lrs" };
  if (endpoint.authType === "basic") {
    const authorization = utf8Basic(endpoint.username ?? "", await openSecret(ctx, endpoint));
    return { ...(await send(ctx, endpoint, request, authorization)), stage: "lrs" };
  }
  const key = tokenKey(endpoint);
  const obtain = () => requestToken(ctx, endpoint);
  let held: HeldToken | { failure: TokenFailure } = await accessToken(ctx, key, obtain);
  if ("failure" in held) return { ...held.failure, stage: "token" };
  let result = await send(ctx, endpoint, request, `Bearer ${held.token}`);
  if (result.status === 401) {
    await forgetAccessToken(ctx, key, held);
    if (!held.fresh) {
      held = await accessToken(ctx, key, obtain);
      if ("failure" in held) return { ...held.failure, stage: "token" };
      result = await send(ctx, endpoint, request, `Bearer ${held.token}`);
      if (result.status === 401) await forgetAccessToken(ctx, key, held);
    }
  }
  return { ...result, stage: "lrs" };
}
