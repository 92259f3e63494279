// An LTI 1.3 platform (an LMS) on loopback, run by vitest in Node (globalSetup) for the whole test run,
// written with jose independently of the worker's code. Each test makes its own platform by name:
// its RSA keys and JWKS, id_tokens it signs on request (correctly or in the ways attackers try), an
// OAuth 2 token endpoint that verifies the tool's client assertion against the key set of the tool
// JWKS URL configured for its client id, as an LMS does (this server cannot reach the worker under
// test, so the test reads that URL from the worker and hands the key set over with the URL: see
// `learnToolKeys` in support.ts), an OIDC authorization endpoint that, like an LMS, answers only a
// redirect_uri configured for the client (the test configures the registration's `tool.redirect_uris`)
// with an id_token for the signed-in user, and line items whose score endpoints record what they get.
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import {
  createLocalJWKSet,
  exportJWK,
  generateKeyPair,
  type JSONWebKeySet,
  type JWK,
  jwtVerify,
  SignJWT,
} from "jose";
import type { TestProject } from "vitest/node";
import { listenOnLoopback } from "../helpers/loopback";
import { deepLinkingControl, deepLinkingReturn } from "./platform-deep-linking";
import { controlRegistration, handleRegistration } from "./platform-registration";
// ——— LTI Advantage services (NRPS, line items): platform-services.ts ———
import { configureServices, handleServices, recordTokenScope, servicesState } from "./platform-services";

export interface ScriptedAnswer {
  status?: number;
  delay_ms?: number;
  body?: string;
  headers?: Record<string, string>;
}

export interface TokenRequest {
  grant_type: string | null;
  client_assertion_type: string | null;
  scope: string | null;
  assertion_valid: boolean;
  assertion_error: string | null;
  assertion_header: Record<string, unknown> | null;
  assertion_claims: Record<string, unknown> | null;
  assertion: string | null;
  /** The tool JWKS URL the assertion was verified against (the one configured for the client). */
  verified_with: string | null;
  status: number;
}

export interface ScoreRequest {
  method: string;
  path: string;
  search: string;
  content_type: string | null;
  authorization: string | null;
  token_known: boolean;
  body: unknown;
  status: number;
}

interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export interface AuthorizeRequest {
  client_id: string | null;
  redirect_uri: string | null;
  status: number;
}

interface Platform {
  keys: SigningKey[];
  clientId: string;
  /** The tool's redirect URIs configured for the client: the authorization endpoint answers no other. */
  redirectUris: string[];
  /** The claims of the launch the signed-in user makes (its nonce, times and audience are the request's). */
  launchClaims: Record<string, unknown> | null;
  authorizeRequests: AuthorizeRequest[];
  toolJwks: JSONWebKeySet | null;
  /** The tool JWKS URL configured for the client (where `toolJwks` was read). */
  toolJwksUrl: string | null;
  tokenAudience: string | null;
  tokenScript: ScriptedAnswer[];
  scoreScript: ScriptedAnswer[];
  lineItemMaximum: number;
  tokens: Set<string>;
  jtis: Set<string>;
  tokenRequests: TokenRequest[];
  scoreRequests: ScoreRequest[];
  jwksFetches: number;
}

async function newKey(): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair("RS256", { extractable: true });
  const kid = randomUUID();
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" } };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function b64url(value: string | Uint8Array): string {
  return Buffer.from(value).toString("base64url");
}

/** Signs an id_token the way the test asks: correctly, or as an attacker would try. */
async function signIdToken(
  platform: Platform,
  payload: Record<string, unknown>,
  mode: string,
  header: Record<string, unknown>,
): Promise<string> {
  const key = platform.keys[platform.keys.length - 1]!;
  if (mode === "none") {
    const head = b64url(JSON.stringify({ alg: "none", typ: "JWT", ...header }));
    return `${head}.${b64url(JSON.stringify(payload))}.`;
  }
  if (mode === "hs256-public") {
    // The classic confusion: HMAC keyed with the platform's public key, hoping the verifier uses it as a secret.
    const { createHmac } = await import("node:crypto");
    const head = b64url(JSON.stringify({ alg: "HS256", typ: "JWT", kid: key.kid, ...header }));
    const body = b64url(JSON.stringify(payload));
    const secret = JSON.stringify(key.publicJwk);
    const signature = createHmac("sha256", secret).update(`${head}.${body}`).digest("base64url");
    return `${head}.${body}.${signature}`;
  }
  let signer = key;
  let kid = key.kid;
  if (mode === "unknown-key") {
    signer = await newKey();
    kid = signer.kid;
  } else if (mode === "wrong-signature") {
    signer = await newKey();
  }
  return new SignJWT(payload)
    .setProtectedHeader({ alg: "RS256", typ: "JWT", kid, ...header })
    .sign(signer.privateKey);
}

async function handleToken(
  platform: Platform,
  req: IncomingMessage,
  base: string,
): Promise<[number, string]> {
  const form = new URLSearchParams(await readBody(req));
  const assertion = form.get("client_assertion");
  const record: TokenRequest = {
    grant_type: form.get("grant_type"),
    client_assertion_type: form.get("client_assertion_type"),
    scope: form.get("scope"),
    assertion_valid: false,
    assertion_error: null,
    assertion_header: null,
    assertion_claims: null,
    assertion,
    verified_with: platform.toolJwksUrl,
    status: 0,
  };
  try {
    if (!platform.toolJwks) throw new Error("the test gave the platform no tool JWKS");
    if (!assertion) throw new Error("no client_assertion");
    const jti = JSON.parse(Buffer.from(assertion.split(".")[1] ?? "", "base64url").toString()).jti;
    const { payload, protectedHeader } = await jwtVerify(assertion, createLocalJWKSet(platform.toolJwks), {
      algorithms: ["RS256"],
      issuer: platform.clientId,
      subject: platform.clientId,
      audience: platform.tokenAudience ?? `${base}/token`,
      requiredClaims: ["jti", "iat", "exp"],
    });
    if (platform.jtis.has(jti)) throw new Error("jti replayed");
    platform.jtis.add(jti);
    record.assertion_valid = true;
    record.assertion_header = protectedHeader as Record<string, unknown>;
    record.assertion_claims = payload as Record<string, unknown>;
  } catch (error) {
    record.assertion_error = String(error);
  }
  const scripted = platform.tokenScript.shift();
  // A scripted delay alone slows the real answer down; a status or body replaces it.
  if (scripted?.delay_ms) await new Promise((r) => setTimeout(r, scripted.delay_ms));
  let answer: [number, string];
  if (scripted && (scripted.status !== undefined || scripted.body !== undefined))
    answer = [scripted.status ?? 200, scripted.body ?? "{}"];
  else if (!record.assertion_valid || record.grant_type !== "client_credentials")
    answer = [401, JSON.stringify({ error: "invalid_client", error_description: record.assertion_error })];
  else {
    const token = randomUUID();
    platform.tokens.add(token);
    recordTokenScope(platform, token, record.scope); // services: the scope the token was issued for
    answer = [
      200,
      JSON.stringify({ access_token: token, token_type: "Bearer", expires_in: 3600, scope: record.scope }),
    ];
  }
  record.status = answer[0];
  platform.tokenRequests.push(record);
  return answer;
}

/**
 * The OIDC authentication request of an LTI launch, as an LMS checks it: its client, and a redirect_uri
 * that is one of the redirect URIs configured for that client (else an error, and no id_token goes
 * anywhere). Accepted: the form_post the user's browser would send, as data (`action` and `fields`).
 */
async function handleAuthorize(platform: Platform, query: URLSearchParams): Promise<[number, unknown]> {
  if (query.get("client_id") !== platform.clientId)
    return [400, { error: "unauthorized_client", error_description: "unknown client_id" }];
  const redirectUri = query.get("redirect_uri");
  if (!redirectUri || !platform.redirectUris.includes(redirectUri))
    return [
      400,
      { error: "invalid_request", error_description: "redirect_uri is not registered for this tool" },
    ];
  if (query.get("response_type") !== "id_token" || query.get("scope") !== "openid")
    return [400, { error: "invalid_request", error_description: "not an LTI authentication request" }];
  if (!platform.launchClaims) return [400, { error: "login_required" }];
  const now = Math.floor(Date.now() / 1000);
  const idToken = await signIdToken(
    platform,
    { ...platform.launchClaims, aud: platform.clientId, iat: now, exp: now + 300, nonce: query.get("nonce") },
    "rs256",
    {},
  );
  return [200, { action: redirectUri, fields: { id_token: idToken, state: query.get("state") ?? "" } }];
}

export async function startPlatformServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const platforms = new Map<string, Platform>();
  let origin = "";
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://platform");
    const parts = url.pathname.split("/").filter(Boolean);
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    try {
      if (parts[0] === "control" && parts[1]) {
        const name = parts[1];
        const body = req.method === "GET" ? {} : JSON.parse((await readBody(req)) || "{}");
        let platform = platforms.get(name);
        if (!platform) {
          platform = {
            keys: [await newKey()],
            clientId: "client",
            redirectUris: [],
            launchClaims: null,
            authorizeRequests: [],
            toolJwks: null,
            toolJwksUrl: null,
            tokenAudience: null,
            tokenScript: [],
            scoreScript: [],
            lineItemMaximum: 100,
            tokens: new Set(),
            jtis: new Set(),
            tokenRequests: [],
            scoreRequests: [],
            jwksFetches: 0,
          };
          platforms.set(name, platform);
        }
        const base = `${origin}/p/${name}`;
        // Dynamic registration (platform-registration.ts): its script and what it received.
        if (parts[2] === "registration")
          return json(200, controlRegistration(name, base, req.method === "PUT" ? body : null));
        // Deep linking (platform-deep-linking.ts): what the return URL expects, and what it received.
        if (parts[2] === "deep-linking") return json(200, await deepLinkingControl(name, base, req));
        if (parts[2] === "id-token") {
          const token = await signIdToken(platform, body.payload, body.mode ?? "rs256", body.header ?? {});
          return json(200, { id_token: token });
        }
        if (parts[2] === "rotate") {
          platform.keys.push(await newKey());
          return json(200, { kid: platform.keys[platform.keys.length - 1]!.kid });
        }
        if (req.method === "PUT") {
          if (body.client_id) platform.clientId = body.client_id;
          if (body.redirect_uris) platform.redirectUris = body.redirect_uris;
          if (body.launch_claims) platform.launchClaims = body.launch_claims;
          if (body.tool_jwks) platform.toolJwks = body.tool_jwks;
          if (body.tool_jwks_url) platform.toolJwksUrl = body.tool_jwks_url;
          if ("token_audience" in body) platform.tokenAudience = body.token_audience;
          if (body.token_script) platform.tokenScript = body.token_script;
          if (body.score_script) platform.scoreScript = body.score_script;
          if (body.line_item_maximum) platform.lineItemMaximum = body.line_item_maximum;
          configureServices(platform, body); // services
        }
        return json(200, {
          issuer: base,
          auth_login_url: `${base}/authorize`,
          auth_token_url: `${base}/token`,
          jwks_url: `${base}/jwks`,
          lineitems: `${base}/lineitems`,
          kid: platform.keys[platform.keys.length - 1]!.kid,
          token_requests: platform.tokenRequests,
          score_requests: platform.scoreRequests,
          issued_tokens: [...platform.tokens],
          jwks_fetches: platform.jwksFetches,
          authorize_requests: platform.authorizeRequests,
          ...servicesState(platform, base), // services
        });
      }
      if (parts[0] === "p" && parts[1]) {
        const platform = platforms.get(parts[1]);
        if (!platform) return json(404, { error: "no such platform" });
        const base = `${origin}/p/${parts[1]}`;
        // Dynamic registration (platform-registration.ts): the OpenID configuration and registration endpoint.
        const registration = await handleRegistration(parts[1], platform, parts[2], req, base);
        if (registration) return json(registration[0], registration[1]);
        // Deep linking (platform-deep-linking.ts): the deep_link_return_url the browser posts `JWT` to.
        if (parts[2] === "deep-linking" && parts[3] === "return" && req.method === "POST") {
          const [status, page] = await deepLinkingReturn(parts[1], platform, base, req);
          return res.writeHead(status, { "content-type": "text/html; charset=utf-8" }).end(page);
        }
        if (await handleServices(platform, req, res, url, parts, base)) return; // services
        if (parts[2] === "jwks") {
          platform.jwksFetches += 1;
          return json(200, { keys: platform.keys.map((k) => k.publicJwk) });
        }
        if (parts[2] === "authorize") {
          const [status, body] = await handleAuthorize(platform, url.searchParams);
          platform.authorizeRequests.push({
            client_id: url.searchParams.get("client_id"),
            redirect_uri: url.searchParams.get("redirect_uri"),
            status,
          });
          return json(status, body);
        }
        if (parts[2] === "token" && req.method === "POST") {
          const [status, text] = await handleToken(platform, req, base);
          return res.writeHead(status, { "content-type": "application/json" }).end(text);
        }
        if (parts[2] === "lineitems" && parts[3] && parts[4] === "scores") {
          const raw = await readBody(req);
          const authorization = req.headers.authorization ?? null;
          const scripted = platform.scoreScript.shift();
          const status = scripted?.status ?? 200;
          platform.scoreRequests.push({
            method: req.method ?? "",
            path: url.pathname,
            search: url.search,
            content_type: req.headers["content-type"] ?? null,
            authorization,
            token_known: platform.tokens.has((authorization ?? "").replace(/^Bearer /, "")),
            body: raw ? JSON.parse(raw) : null,
            status,
          });
          if (scripted?.delay_ms) await new Promise((r) => setTimeout(r, scripted.delay_ms));
          if (!res.destroyed)
            res
              .writeHead(status, scripted?.headers ?? { "content-type": "application/json" })
              .end(scripted?.body ?? "{}");
          return;
        }
        if (parts[2] === "lineitems" && parts[3]) {
          return json(200, {
            id: `${base}/lineitems/${parts[3]}`,
            label: "Lingua lesson",
            scoreMaximum: platform.lineItemMaximum,
          });
        }
      }
      json(404, { error: "not found" });
    } catch (error) {
      json(500, { error: String(error) });
    }
  });
  const listening = await listenOnLoopback(server);
  origin = listening.url;
  return listening;
}

declare module "vitest" {
  export interface ProvidedContext {
    ltiPlatformUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const platform = await startPlatformServer();
  project.provide("ltiPlatformUrl", platform.url);
  return platform.close;
}
