// Deep Linking 2.0 on the loopback platform (platform-server.ts hands it its requests): the platform's
// deep_link_return_url, which receives the tool's `LtiDeepLinkingResponse` as the form field `JWT` and
// verifies it as an LMS does — RS256 against the key set of the tool JWKS URL configured for the client
// (`learnToolKeys` in support.ts), `iss` the client id, `aud` the platform's issuer, and every claim
// the specification requires, `data` echoed as the request sent it — and records what it got.
import type { IncomingMessage } from "node:http";
import { createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet, jwtVerify } from "jose";

const LTI = "https://purl.imsglobal.org/spec/lti/claim/";
const DL = "https://purl.imsglobal.org/spec/lti-dl/claim/";

/** What the platform's deep-linking request carried, which the response must match. */
export interface DeepLinkingExpectation {
  deployment_id: string;
  /** `data` of the request's settings (undefined: the request sent none, and the response must not either). */
  data?: unknown;
}

/** One post to the return URL, as the platform judged it. */
export interface DeepLinkingReturn {
  content_type: string | null;
  valid: boolean;
  /** Every check that failed, in words. */
  problems: string[];
  header: Record<string, unknown> | null;
  claims: Record<string, unknown> | null;
  /** The key set the JWT was verified with was read from this tool JWKS URL. */
  verified_with: string | null;
}

/** What deep linking reads of a platform of the simulator. */
export interface DeepLinkingPlatform {
  clientId: string;
  toolJwks: JSONWebKeySet | null;
  toolJwksUrl: string | null;
}

interface State {
  expectation: DeepLinkingExpectation | null;
  returns: DeepLinkingReturn[];
}

const states = new Map<string, State>();

function stateOf(name: string): State {
  let state = states.get(name);
  if (!state) {
    state = { expectation: null, returns: [] };
    states.set(name, state);
  }
  return state;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** `PUT /control/{name}/deep-linking` sets what the next responses must carry; any method answers the state. */
export async function deepLinkingControl(
  name: string,
  base: string,
  req: IncomingMessage,
): Promise<Record<string, unknown>> {
  const state = stateOf(name);
  if (req.method === "PUT") {
    const body = JSON.parse((await readBody(req)) || "{}");
    state.expectation = body.expect ?? null;
    state.returns = [];
  }
  return { return_url: `${base}/deep-linking/return`, returns: state.returns };
}

/** The checks of the LTI Deep Linking 2.0 response (§4.5 and the security framework's JWT rules). */
async function judge(
  platform: DeepLinkingPlatform,
  issuer: string,
  expectation: DeepLinkingExpectation | null,
  jwt: string,
): Promise<Omit<DeepLinkingReturn, "content_type">> {
  const problems: string[] = [];
  let header: Record<string, unknown> | null = null;
  let claims: Record<string, unknown> | null = null;
  try {
    header = decodeProtectedHeader(jwt) as Record<string, unknown>;
    if (!platform.toolJwks) throw new Error("the test gave the platform no tool JWKS");
    const { payload } = await jwtVerify(jwt, createLocalJWKSet(platform.toolJwks), {
      algorithms: ["RS256"],
      issuer: platform.clientId,
      audience: issuer,
      requiredClaims: ["iat", "exp", "nonce"],
      maxTokenAge: "15m",
    });
    claims = payload as Record<string, unknown>;
  } catch (error) {
    problems.push(`jwt: ${String(error)}`);
  }
  if (header && typeof header.kid !== "string") problems.push("header: no kid");
  if (claims) {
    if (typeof claims.nonce !== "string" || claims.nonce.length < 8) problems.push("nonce: missing or short");
    if (claims[`${LTI}message_type`] !== "LtiDeepLinkingResponse") problems.push("message_type");
    if (claims[`${LTI}version`] !== "1.3.0") problems.push("version");
    if (expectation && claims[`${LTI}deployment_id`] !== expectation.deployment_id)
      problems.push("deployment_id");
    if (expectation && JSON.stringify(claims[`${DL}data`]) !== JSON.stringify(expectation.data))
      problems.push("data: not the request's, unchanged");
    const items = claims[`${DL}content_items`];
    if (!Array.isArray(items)) problems.push("content_items: not an array");
    else
      items.forEach((item, i) => {
        if (item?.type !== "ltiResourceLink") problems.push(`content_items[${i}].type`);
        if (typeof item?.url !== "string" || !/^https?:\/\//.test(item.url))
          problems.push(`content_items[${i}].url`);
      });
  }
  return {
    valid: problems.length === 0,
    problems,
    header,
    claims,
    verified_with: platform.toolJwksUrl,
  };
}

/** `POST /p/{name}/deep-linking/return`: the browser's form post of `JWT`; 200 and a short page when it verifies. */
export async function deepLinkingReturn(
  name: string,
  platform: DeepLinkingPlatform,
  issuer: string,
  req: IncomingMessage,
): Promise<[number, string]> {
  const state = stateOf(name);
  const form = new URLSearchParams(await readBody(req));
  const jwt = form.get("JWT");
  const judged = jwt
    ? await judge(platform, issuer, state.expectation, jwt)
    : { valid: false, problems: ["no JWT field"], header: null, claims: null, verified_with: null };
  state.returns.push({ content_type: req.headers["content-type"] ?? null, ...judged });
  return judged.valid ? [200, "<p>Content added.</p>"] : [400, `<p>${judged.problems.join("; ")}</p>`];
}
