// Dynamic registration on the loopback LMS (test/lti/platform-server.ts imports this): each simulated
// platform's OpenID configuration (`/p/{name}/openid-configuration`) and registration endpoint
// (`/p/{name}/register`), written from LTI Dynamic Registration 1.0 independently of the worker's
// code. The registration endpoint checks the tool's registration document field by field, as an LMS
// does, answers 400 `invalid_client_metadata` naming every problem, or gives the tool a client id (and
// a deployment id) and configures the platform with the document's redirect URIs, so that the
// registered tool can launch at once. The test scripts it through `PUT /control/{name}/registration`.
import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { ScriptedAnswer } from "./platform-server";

export interface RegistrationRequest {
  authorization: string | null;
  content_type: string | null;
  body: Record<string, unknown> | null;
  /** What the endpoint found wrong with the document (empty: accepted). */
  problems: string[];
  status: number;
  /** The client id it gave, when it accepted. */
  client_id: string | null;
}

export interface ConfigurationRequest {
  authorization: string | null;
  accept: string | null;
}

interface RegistrationState {
  /** The registration token the platform handed the tool: required as bearer on both requests when set. */
  token: string | null;
  /** Fields of the OpenID configuration replaced (a null value removes the field). */
  configuration: Record<string, unknown>;
  /** Answers to the next registration requests, replacing the real answer. */
  answers: ScriptedAnswer[];
  /** The deployment id the next registration gets; null: the platform makes none. */
  deploymentId: string | null | undefined;
  registrationRequests: RegistrationRequest[];
  configurationRequests: ConfigurationRequest[];
}

/** The part of the simulator's platform a registration configures. */
export interface RegisteringPlatform {
  clientId: string;
  redirectUris: string[];
}

const states = new Map<string, RegistrationState>();

function stateOf(name: string): RegistrationState {
  let state = states.get(name);
  if (!state) {
    state = {
      token: null,
      configuration: {},
      answers: [],
      deploymentId: undefined,
      registrationRequests: [],
      configurationRequests: [],
    };
    states.set(name, state);
  }
  return state;
}

const AGS = "https://purl.imsglobal.org/spec/lti-ags/scope/";
const REQUIRED_SCOPES = [
  `${AGS}lineitem`,
  `${AGS}lineitem.readonly`,
  `${AGS}result.readonly`,
  `${AGS}score`,
  "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly",
];
const TOOL_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-tool-configuration";

function configuration(base: string, state: RegistrationState): Record<string, unknown> {
  const document: Record<string, unknown> = {
    issuer: base,
    authorization_endpoint: `${base}/authorize`,
    registration_endpoint: `${base}/register`,
    jwks_uri: `${base}/jwks`,
    token_endpoint: `${base}/token`,
    token_endpoint_auth_methods_supported: ["private_key_jwt"],
    token_endpoint_auth_signing_alg_values_supported: ["RS256"],
    scopes_supported: ["openid", ...REQUIRED_SCOPES],
    response_types_supported: ["id_token"],
    id_token_signing_alg_values_supported: ["RS256"],
    claims_supported: ["sub", "iss", "name", "given_name", "family_name", "email"],
    subject_types_supported: ["public", "pairwise"],
    "https://purl.imsglobal.org/spec/lti-platform-configuration": {
      product_family_code: "moodle",
      version: "4.5",
      messages_supported: [{ type: "LtiResourceLinkRequest" }, { type: "LtiDeepLinkingRequest" }],
    },
  };
  for (const [key, value] of Object.entries(state.configuration)) {
    if (value === null) delete document[key];
    else document[key] = value;
  }
  return document;
}

const isUrl = (value: unknown) => {
  if (typeof value !== "string") return false;
  try {
    return /^https?:$/.test(new URL(value).protocol);
  } catch {
    return false;
  }
};
const same = (a: unknown, b: unknown[]) =>
  Array.isArray(a) && a.length === b.length && b.every((item) => a.includes(item));

/** Every way the document departs from LTI Dynamic Registration's tool registration. */
export function registrationProblems(doc: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const expect = (ok: boolean, problem: string) => {
    if (!ok) problems.push(problem);
  };
  expect(doc.application_type === "web", 'application_type must be "web"');
  expect(same(doc.response_types, ["id_token"]), 'response_types must be ["id_token"]');
  expect(
    same(doc.grant_types, ["implicit", "client_credentials"]),
    'grant_types must be ["implicit", "client_credentials"]',
  );
  expect(isUrl(doc.initiate_login_uri), "initiate_login_uri must be a URL");
  expect(
    Array.isArray(doc.redirect_uris) && doc.redirect_uris.length > 0 && doc.redirect_uris.every(isUrl),
    "redirect_uris must list URLs",
  );
  expect(isUrl(doc.jwks_uri), "jwks_uri must be a URL");
  expect(
    doc.token_endpoint_auth_method === "private_key_jwt",
    'token_endpoint_auth_method must be "private_key_jwt"',
  );
  expect(typeof doc.client_name === "string" && doc.client_name.length > 0, "client_name is required");
  const scopes = typeof doc.scope === "string" ? doc.scope.split(" ") : [];
  for (const scope of REQUIRED_SCOPES) expect(scopes.includes(scope), `scope lacks ${scope}`);
  const tool = doc[TOOL_CONFIGURATION] as Record<string, unknown> | undefined;
  if (!tool || typeof tool !== "object") {
    problems.push(`${TOOL_CONFIGURATION} is required`);
    return problems;
  }
  const host = isUrl(doc.initiate_login_uri) ? new URL(doc.initiate_login_uri as string).host : null;
  expect(typeof tool.domain === "string" && tool.domain === host, "domain must be the tool's host");
  expect(isUrl(tool.target_link_uri), "target_link_uri must be a URL");
  const claims = Array.isArray(tool.claims) ? tool.claims : [];
  for (const claim of ["iss", "sub"]) expect(claims.includes(claim), `claims lacks ${claim}`);
  const messages = Array.isArray(tool.messages) ? (tool.messages as Record<string, unknown>[]) : [];
  for (const type of ["LtiResourceLinkRequest", "LtiDeepLinkingRequest"]) {
    const message = messages.find((m) => m?.type === type);
    expect(Boolean(message), `messages lacks ${type}`);
    if (message && message.target_link_uri !== undefined)
      expect(isUrl(message.target_link_uri), `${type}.target_link_uri must be a URL`);
  }
  return problems;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** `PUT|GET /control/{name}/registration`: scripts the platform's registration, answers its state. */
export function controlRegistration(name: string, base: string, body: Record<string, unknown> | null) {
  const state = stateOf(name);
  if (body) {
    if ("token" in body) state.token = body.token as string | null;
    if (body.configuration) state.configuration = body.configuration as Record<string, unknown>;
    if (body.answers) state.answers = body.answers as ScriptedAnswer[];
    if ("deployment_id" in body) state.deploymentId = body.deployment_id as string | null;
  }
  return {
    openid_configuration: `${base}/openid-configuration`,
    registration_token: state.token,
    configuration_requests: state.configurationRequests,
    registration_requests: state.registrationRequests,
  };
}

/**
 * The platform's registration endpoints under `/p/{name}/…`, or null for any other path. Answers
 * `[status, body]`.
 */
export async function handleRegistration(
  name: string,
  platform: RegisteringPlatform,
  path: string | undefined,
  req: IncomingMessage,
  base: string,
): Promise<[number, unknown] | null> {
  const state = stateOf(name);
  const authorization = req.headers.authorization ?? null;
  const tokenOk = state.token === null || authorization === `Bearer ${state.token}`;
  if (path === "openid-configuration" && req.method === "GET") {
    state.configurationRequests.push({ authorization, accept: req.headers.accept ?? null });
    if (!tokenOk) return [401, { error: "invalid_token" }];
    return [200, configuration(base, state)];
  }
  if (path !== "register" || req.method !== "POST") return null;
  const raw = await readBody(req);
  const record: RegistrationRequest = {
    authorization,
    content_type: req.headers["content-type"] ?? null,
    body: null,
    problems: [],
    status: 0,
    client_id: null,
  };
  state.registrationRequests.push(record);
  try {
    record.body = JSON.parse(raw);
  } catch {
    record.problems.push("the body is not JSON");
  }
  if (!tokenOk) record.problems.push("the registration token is missing or wrong");
  if (!/^application\/json/.test(record.content_type ?? ""))
    record.problems.push("Content-Type must be JSON");
  if (record.body) record.problems.push(...registrationProblems(record.body));
  const scripted = state.answers.shift();
  if (scripted?.delay_ms) await new Promise((r) => setTimeout(r, scripted.delay_ms));
  if (scripted && (scripted.status !== undefined || scripted.body !== undefined)) {
    record.status = scripted.status ?? 200;
    return [record.status, scripted.body === undefined ? {} : JSON.parse(scripted.body)];
  }
  if (record.problems.length > 0) {
    record.status = 400;
    return [400, { error: "invalid_client_metadata", error_description: record.problems.join("; ") }];
  }
  const doc = record.body as Record<string, unknown>;
  const clientId = `dyn-${randomUUID()}`;
  const deploymentId = state.deploymentId === undefined ? `dep-${randomUUID()}` : state.deploymentId;
  record.status = 200;
  record.client_id = clientId;
  // As an LMS's registration does: the client and its redirect URIs are now configured.
  platform.clientId = clientId;
  platform.redirectUris = doc.redirect_uris as string[];
  const tool = doc[TOOL_CONFIGURATION] as Record<string, unknown>;
  return [
    200,
    {
      ...doc,
      client_id: clientId,
      [TOOL_CONFIGURATION]: { ...tool, ...(deploymentId === null ? {} : { deployment_id: deploymentId }) },
    },
  ];
}
