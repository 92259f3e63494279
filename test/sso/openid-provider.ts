// A real OpenID Provider for the SSO sign-in tests, run by vitest in Node (globalSetup): panva's
// `oidc-provider` (OpenID-certified) with its own RSA key, open dynamic client registration (each test
// registers a client for its institution's redirect URI at `/reg`), and accounts the tests define.
//
// The provider listens on one loopback port; the tests (and the worker) reach it through a proxy on
// another, whose URL is the issuer. The proxy passes everything through, except:
//   PUT  /control/accounts   { sub, claims }      defines (or replaces) an account's claims
//   PUT  /control/tamper     { client_id, mode }  the next token response of that client carries an ID
//                                                 token altered as `mode` says, re-signed with the
//                                                 provider's own key unless the mode is about the
//                                                 signature: alg_none, hs256, wrong_audience, azp,
//                                                 wrong_issuer, expired, replayed_nonce
//   GET  /interaction/<uid>/login?account=<sub>   finishes the provider's login interaction as that
//                                                 account (the test plays the browser)
import { createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import Provider from "oidc-provider";
import type { TestProject } from "vitest/node";
import { listenOnLoopback } from "../helpers/loopback";

type Mode = "alg_none" | "hs256" | "wrong_audience" | "azp" | "wrong_issuer" | "expired" | "replayed_nonce";

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

const b64url = (value: string | Uint8Array) => Buffer.from(value).toString("base64url");

export async function startOpenIdProvider(): Promise<{ url: string; close: () => Promise<void> }> {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const privateJwk = { ...(await exportJWK(privateKey)), kid: "op-key-1", alg: "RS256", use: "sig" } as JWK;
  const accounts = new Map<string, Record<string, unknown>>();
  const tampering = new Map<string, Mode>();
  const lastNonce = new Map<string, string>();
  const secrets = new Map<string, string>();

  // The provider's own listener (internal); its issuer is the proxy's URL, known once that listens.
  let provider!: any;
  const inner = createServer((req, res) => provider.callback()(req, res));
  const innerListening = await listenOnLoopback(inner);
  const innerPort = Number(new URL(innerListening.url).port);

  const outer = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    try {
      await handle(req, res);
    } catch (error) {
      res.writeHead(500, { "content-type": "text/plain" }).end(String(error));
    }
  });
  const outerListening = await listenOnLoopback(outer);
  const issuer = outerListening.url;

  provider = new Provider(issuer, {
    clients: [],
    jwks: { keys: [privateJwk] },
    cookies: { keys: ["lingua-test-op-cookie-key"] },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
    },
    // Scope claims go into the ID token itself (Lingua reads no userinfo).
    conformIdTokenClaims: false,
    claims: {
      openid: ["sub"],
      email: ["email", "email_verified"],
      profile: ["name", "groups", "role"],
    },
    scopes: ["openid", "email", "profile", "offline_access"],
    async findAccount(_ctx: unknown, sub: string) {
      const claims = accounts.get(sub);
      if (!claims) return undefined;
      return { accountId: sub, claims: async () => ({ sub, ...claims }) };
    },
    // Every client here is first-party: consent is granted without asking.
    async loadExistingGrant(ctx: any) {
      const grantId =
        ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session?.grantIdFor(ctx.oidc.client?.clientId ?? "");
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client?.clientId,
        accountId: ctx.oidc.session?.accountId,
      });
      grant.addOIDCScope("openid email profile");
      await grant.save();
      return grant;
    },
    pkce: { required: () => true },
    // The clients' key sets (`private_key_jwt`) are on loopback here: without the provider's guard
    // against special-use addresses, which would refuse them.
    fetch: (url: string, { dispatcher: _guard, ...options }: RequestInit & { dispatcher?: unknown }) =>
      globalThis.fetch(url, options),
    ttl: { Interaction: 600, Grant: 600, Session: 600, AccessToken: 600, IdToken: 600 },
  });

  async function tamper(idToken: string, clientId: string, mode: Mode): Promise<string> {
    const header = decodeProtectedHeader(idToken);
    const claims = decodeJwt(idToken) as Record<string, unknown>;
    const now = Math.floor(Date.now() / 1000);
    if (mode === "alg_none")
      return `${b64url(JSON.stringify({ alg: "none", typ: "JWT" }))}.${b64url(JSON.stringify(claims))}.`;
    if (mode === "hs256")
      return new SignJWT(claims)
        .setProtectedHeader({ alg: "HS256", kid: header.kid })
        .sign(new TextEncoder().encode(secrets.get(clientId) ?? "secret"));
    const changed = { ...claims };
    if (mode === "wrong_audience") changed.aud = "someone-else";
    if (mode === "azp") {
      changed.aud = [clientId, "someone-else"];
      changed.azp = "someone-else";
    }
    if (mode === "wrong_issuer") changed.iss = "https://evil.example";
    if (mode === "expired") {
      changed.iat = now - 7200;
      changed.exp = now - 3600;
    }
    if (mode === "replayed_nonce") changed.nonce = lastNonce.get(clientId) ?? "an-old-nonce";
    return new SignJWT(changed)
      .setProtectedHeader({ alg: "RS256", kid: privateJwk.kid as string })
      .sign(privateKey);
  }

  function clientOf(req: IncomingMessage, body: Buffer): string | null {
    const auth = req.headers.authorization;
    if (auth?.startsWith("Basic ")) {
      const decoded = Buffer.from(auth.slice(6), "base64").toString("utf8");
      return decodeURIComponent(decoded.slice(0, decoded.indexOf(":")).replace(/\+/g, " "));
    }
    return new URLSearchParams(body.toString("utf8")).get("client_id");
  }

  function proxy(
    req: IncomingMessage,
    body: Buffer,
  ): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const forward = request(
        { host: "127.0.0.1", port: innerPort, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          const chunks: Buffer[] = [];
          answer.on("data", (c: Buffer) => chunks.push(c));
          answer.on("end", () =>
            resolve({
              status: answer.statusCode ?? 500,
              headers: answer.headers,
              body: Buffer.concat(chunks),
            }),
          );
        },
      );
      forward.on("error", reject);
      forward.end(body);
    });
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? "/", issuer);
    const body = await readBody(req);
    if (req.method === "PUT" && url.pathname === "/control/accounts") {
      const { sub, claims } = JSON.parse(body.toString("utf8"));
      accounts.set(sub, claims);
      res.writeHead(204).end();
      return;
    }
    if (req.method === "PUT" && url.pathname === "/control/tamper") {
      const { client_id, mode } = JSON.parse(body.toString("utf8"));
      tampering.set(client_id, mode);
      res.writeHead(204).end();
      return;
    }
    const login = /^\/interaction\/([^/]+)\/login$/.exec(url.pathname);
    if (req.method === "GET" && login) {
      const account = url.searchParams.get("account") ?? "";
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId: account } },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    const answer = await proxy(req, body);
    let out = answer.body;
    if (req.method === "POST" && url.pathname === "/reg" && answer.status === 201) {
      const client = JSON.parse(out.toString("utf8"));
      secrets.set(client.client_id, client.client_secret);
    }
    if (req.method === "POST" && url.pathname === "/token" && answer.status === 200) {
      const clientId = clientOf(req, body);
      const json = JSON.parse(out.toString("utf8"));
      const mode = clientId ? tampering.get(clientId) : undefined;
      if (clientId && typeof json.id_token === "string") {
        const nonce = decodeJwt(json.id_token).nonce;
        if (mode) {
          tampering.delete(clientId);
          json.id_token = await tamper(json.id_token, clientId, mode);
        }
        if (typeof nonce === "string") lastNonce.set(clientId, nonce);
        out = Buffer.from(JSON.stringify(json));
      }
    }
    const headers = { ...answer.headers };
    delete headers["content-length"];
    delete headers["transfer-encoding"];
    res.writeHead(answer.status, headers as Record<string, string>).end(out);
  }

  return {
    url: issuer,
    close: async () => {
      await outerListening.close();
      await innerListening.close();
    },
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    openIdProviderUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const op = await startOpenIdProvider();
  project.provide("openIdProviderUrl", op.url);
  return op.close;
}
