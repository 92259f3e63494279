// A strict Learning Record Store on loopback, run by vitest in Node (globalSetup) for the whole test
// run: the counterpart the xAPI forwarding tests send statements to. Tests inside workerd create
// instances, script their failures and read what they received through test/helpers/lrs.ts; tests in
// Node may call `startLrs()` themselves and use the same HTTP control API.
//
// Instances. Each test makes its own, named by the test (`crypto.randomUUID()` by default):
//   {base}/lrs/{name}/xapi/about        GET, no credentials, no version header: `{ version: [...] }`
//   {base}/lrs/{name}/xapi/statements   POST (one statement or an array) → 200 with the array of ids;
//                                       GET (`limit`, `statementId`) → `{ statements, more: "" }`
//   {base}/lrs/{name}/oauth/token       OAuth 2 client-credentials grant (client_id/client_secret in a
//                                       Basic header or in the form) → `{ access_token, token_type:
//                                       "Bearer", expires_in }`; each token is counted
// An unknown instance answers 404.
//
// What every xAPI request is checked for, in this order (the first failure answers):
//   1. a scripted failure matching the request (see `script` below) is played instead of an answer;
//   2. credentials (not on /about): Basic with the instance's username and password, or a Bearer
//      token this instance issued and that has not expired → otherwise 401 with WWW-Authenticate;
//   3. `X-Experience-API-Version` present and exactly one of the instance's versions (default
//      ["1.0.3", "2.0.0"]) → otherwise 400 (not on /about);
//   4. POST /statements: a JSON object or a non-empty array; more statements than
//      `max_statements_per_request` → 413; every statement valid → otherwise 400 for the WHOLE batch,
//      the body's `message` naming the statement (index and id) and each problem, `warnings` listing
//      them one per invalid statement (Learning Locker's shape). Valid means: Learning
//      Locker's rule set (`xapi-validation`) passes, and our own checks: `id` present and an RFC 4122
//      UUID (stricter than the spec, which lets the LRS assign one: Lingua must always send its
//      derived id), every IRI absolute (verb, object, activity types, extension keys, context
//      activities, account homePage), `score.scaled` in [-1, 1] and `raw` within `min`/`max`,
//      `result.duration` ISO 8601, language-map keys RFC 5646 tags with string values, no `stored`
//      or `authority` from the client, `timestamp` RFC 3339 with a time zone, and the statement id
//      not in `reject` (scripted: 400 naming it, as if the LRS disliked that statement);
//      the same id twice in one batch → 400; an id already stored (or scripted in `conflict`) →
//      409 for the whole batch, nothing stored;
//   5. all good: every statement stored, 200 `["id", ...]`.
//
// Control API (JSON):
//   PUT  {base}/control/{name}  creates or reconfigures the instance. Body (all optional):
//     versions: string[]                        announced in /about and accepted in the header
//     basic: { username, password } | null      Basic credentials accepted (default lrs-user / lrs-pass;
//                                               none when `oauth2` is given without `basic`)
//     oauth2: { client_id, client_secret, expires_in?: seconds (default 3600), scope? } | null
//     max_statements_per_request: number        above it → 413
//     reject: { [statementId]: message }        a batch containing one of them → 400 naming it
//     conflict: string[]                        a batch containing one of them → 409
//     script: [{ on?, status?, retry_after?, body?, hang?, times? }]
//        played in order by the requests they match, each `times` times (default 1), before any check:
//        on: "post_statements" (default) | "get_statements" | "about" | "token" | "any";
//        status + retry_after (seconds, sent as Retry-After) + body; or hang: true (no answer until
//        the client gives up, or `hang_ms`, default 30 s, then the connection is dropped).
//     seed: statements stored as if POSTed earlier (not validated, not counted as posted)
//     expire_tokens: true                       every token issued so far stops being accepted
//     reset: false                              keep the recorded requests and stored statements
//                                               (default: a reconfigured instance starts empty)
//   GET  {base}/control/{name}  → { requests, statements, posted, tokens_issued }
//     requests: every request to the instance in order: { at, method, path ("/xapi/statements"…),
//       query, headers (lower-case names; authorization as sent), version, auth ({ type: "basic",
//       username, password } | { type: "bearer", token } | null), body, statement_ids, status }
//       (status 0 for a request left hanging);
//     statements: stored, in order: { id, statement, version, stored_at };
//     posted: { [statementId]: how many POST requests carried it, whatever the answer };
//     tokens_issued: how many OAuth tokens the token endpoint issued.
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createRequire } from "node:module";
import type { TestProject } from "vitest/node";
import { listenOnLoopback } from "./loopback";

const require = createRequire(import.meta.url);
interface RulrWarning {
  path: (string | number)[];
  data: unknown;
  typeName?: string;
  keys?: string[];
  constructor: { name: string };
}
const xapiValidation = require("xapi-validation").default as (statement: unknown) => RulrWarning[];

export type ScriptOn = "post_statements" | "get_statements" | "about" | "token" | "any";

export interface ScriptedFailure {
  on?: ScriptOn;
  status?: number;
  retry_after?: number | string;
  body?: string;
  hang?: boolean;
  hang_ms?: number;
  times?: number;
}

export interface LrsOptions {
  versions?: string[];
  basic?: { username: string; password: string } | null;
  oauth2?: { client_id: string; client_secret: string; expires_in?: number; scope?: string } | null;
  max_statements_per_request?: number;
  reject?: Record<string, string>;
  conflict?: string[];
  script?: ScriptedFailure[];
  seed?: Record<string, unknown>[];
  expire_tokens?: boolean;
  reset?: boolean;
}

export interface LrsRequest {
  at: string;
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  version: string | null;
  auth: { type: "basic"; username: string; password: string } | { type: "bearer"; token: string } | null;
  body: string;
  statement_ids: string[];
  status: number;
}

export interface StoredStatement {
  id: string;
  statement: Record<string, unknown>;
  version: string | null;
  stored_at: string;
}

export interface LrsState {
  requests: LrsRequest[];
  statements: StoredStatement[];
  posted: Record<string, number>;
  tokens_issued: number;
}

export const DEFAULT_BASIC = { username: "lrs-user", password: "lrs-pass" };
export const DEFAULT_VERSIONS = ["1.0.3", "2.0.0"];
const DEFAULT_HANG_MS = 30_000;

interface Instance {
  versions: string[];
  basic: { username: string; password: string } | null;
  oauth2: { client_id: string; client_secret: string; expires_in: number; scope?: string } | null;
  maxPerRequest: number | null;
  reject: Map<string, string>;
  conflict: Set<string>;
  script: (ScriptedFailure & { left: number })[];
  tokens: Map<string, number>;
  tokensIssued: number;
  requests: LrsRequest[];
  stored: Map<string, StoredStatement>;
  posted: Map<string, number>;
}

function freshInstance(): Instance {
  return {
    versions: DEFAULT_VERSIONS,
    basic: DEFAULT_BASIC,
    oauth2: null,
    maxPerRequest: null,
    reject: new Map(),
    conflict: new Set(),
    script: [],
    tokens: new Map(),
    tokensIssued: 0,
    requests: [],
    stored: new Map(),
    posted: new Map(),
  };
}

function configure(instance: Instance, options: LrsOptions) {
  if (options.reset !== false) {
    instance.requests = [];
    instance.stored = new Map();
    instance.posted = new Map();
  }
  if (options.versions) instance.versions = options.versions;
  if (options.basic !== undefined) instance.basic = options.basic;
  // An LRS configured for OAuth 2 alone accepts no Basic credentials.
  else if (options.oauth2) instance.basic = null;
  if (options.oauth2 !== undefined)
    instance.oauth2 = options.oauth2 && { expires_in: 3600, ...options.oauth2 };
  if (options.max_statements_per_request !== undefined)
    instance.maxPerRequest = options.max_statements_per_request;
  if (options.reject) instance.reject = new Map(Object.entries(options.reject));
  if (options.conflict) instance.conflict = new Set(options.conflict);
  if (options.script) instance.script = options.script.map((s) => ({ ...s, left: s.times ?? 1 }));
  if (options.expire_tokens) instance.tokens.clear();
  for (const statement of options.seed ?? []) {
    const id = String(statement.id);
    instance.stored.set(id, { id, statement, version: null, stored_at: new Date().toISOString() });
  }
}

// ---------------------------------------------------------------------------------------------
// The statement checks beyond xapi-validation.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const RFC3339 =
  /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/i;
const ISO_DURATION =
  /^P(?!$)(\d+(\.\d+)?Y)?(\d+(\.\d+)?M)?(\d+(\.\d+)?W)?(\d+(\.\d+)?D)?(T(?=\d)(\d+(\.\d+)?H)?(\d+(\.\d+)?M)?(\d+(\.\d+)?S)?)?$/;
// RFC 5646: language[-extlang][-script][-region](-variant)*(-extension)*[-privateuse], or private use.
const LANGUAGE_TAG =
  /^(([a-z]{2,3}(-[a-z]{3}){0,3}|[a-z]{4}|[a-z]{5,8})(-[a-z]{4})?(-([a-z]{2}|\d{3}))?(-([a-z\d]{5,8}|\d[a-z\d]{3}))*(-[\da-wyz](-[a-z\d]{2,8})+)*(-x(-[a-z\d]{1,8})+)?|x(-[a-z\d]{1,8})+)$/i;

function isAbsoluteIri(value: unknown): boolean {
  if (typeof value !== "string" || /\s/.test(value)) return false;
  const scheme = /^([a-z][a-z\d+.-]*):(.+)$/i.exec(value);
  if (!scheme) return false;
  if (/^https?$/i.test(scheme[1] ?? "")) {
    try {
      return new URL(value).hostname !== "";
    } catch {
      return false;
    }
  }
  return true;
}

type Problems = string[];

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function checkLanguageMap(map: unknown, path: string, problems: Problems) {
  if (!isObject(map)) return;
  for (const [key, value] of Object.entries(map)) {
    if (!LANGUAGE_TAG.test(key)) problems.push(`${path}: "${key}" is not an RFC 5646 language tag`);
    if (typeof value !== "string") problems.push(`${path}.${key}: a language map's value must be a string`);
  }
}

function checkIri(value: unknown, path: string, problems: Problems) {
  if (value !== undefined && !isAbsoluteIri(value))
    problems.push(`${path}: ${JSON.stringify(value)} is not an absolute IRI`);
}

function checkExtensions(extensions: unknown, path: string, problems: Problems) {
  if (!isObject(extensions)) return;
  for (const key of Object.keys(extensions)) checkIri(key, `${path}["${key}"]`, problems);
}

function checkDefinition(definition: unknown, path: string, problems: Problems) {
  if (!isObject(definition)) return;
  checkLanguageMap(definition.name, `${path}.name`, problems);
  checkLanguageMap(definition.description, `${path}.description`, problems);
  checkIri(definition.type, `${path}.type`, problems);
  checkIri(definition.moreInfo, `${path}.moreInfo`, problems);
  checkExtensions(definition.extensions, `${path}.extensions`, problems);
  for (const list of ["choices", "scale", "source", "target", "steps"]) {
    const components = definition[list];
    if (!Array.isArray(components)) continue;
    components.forEach((component, i) => {
      if (isObject(component))
        checkLanguageMap(component.description, `${path}.${list}[${i}].description`, problems);
    });
  }
}

function checkActor(actor: unknown, path: string, problems: Problems) {
  if (!isObject(actor)) return;
  if (isObject(actor.account)) checkIri(actor.account.homePage, `${path}.account.homePage`, problems);
  if (Array.isArray(actor.member))
    actor.member.forEach((m, i) => {
      checkActor(m, `${path}.member[${i}]`, problems);
    });
}

function checkObject(object: unknown, path: string, problems: Problems) {
  if (!isObject(object)) return;
  const type = object.objectType ?? "Activity";
  if (type === "Activity") {
    checkIri(object.id, `${path}.id`, problems);
    checkDefinition(object.definition, `${path}.definition`, problems);
  } else if (type === "Agent" || type === "Group") {
    checkActor(object, path, problems);
  } else if (type === "SubStatement") {
    checkBody(object, path, problems);
  }
}

function checkBody(statement: Record<string, unknown>, path: string, problems: Problems) {
  checkActor(statement.actor, `${path}.actor`, problems);
  if (isObject(statement.verb)) {
    checkIri(statement.verb.id, `${path}.verb.id`, problems);
    checkLanguageMap(statement.verb.display, `${path}.verb.display`, problems);
  }
  checkObject(statement.object, `${path}.object`, problems);
  const result = statement.result;
  if (isObject(result)) {
    const score = result.score;
    if (isObject(score)) {
      const { scaled, raw, min, max } = score as Record<string, number | undefined>;
      if (typeof scaled === "number" && (scaled < -1 || scaled > 1))
        problems.push(`${path}.result.score.scaled: ${scaled} is outside [-1, 1]`);
      if (typeof raw === "number" && typeof min === "number" && raw < min)
        problems.push(`${path}.result.score.raw: ${raw} is below min ${min}`);
      if (typeof raw === "number" && typeof max === "number" && raw > max)
        problems.push(`${path}.result.score.raw: ${raw} is above max ${max}`);
    }
    if (
      result.duration !== undefined &&
      !(typeof result.duration === "string" && ISO_DURATION.test(result.duration))
    )
      problems.push(
        `${path}.result.duration: ${JSON.stringify(result.duration)} is not an ISO 8601 duration`,
      );
    checkExtensions(result.extensions, `${path}.result.extensions`, problems);
  }
  const context = statement.context;
  if (isObject(context)) {
    if (
      context.language !== undefined &&
      !(typeof context.language === "string" && LANGUAGE_TAG.test(context.language))
    )
      problems.push(`${path}.context.language: ${JSON.stringify(context.language)} is not an RFC 5646 tag`);
    checkExtensions(context.extensions, `${path}.context.extensions`, problems);
    checkActor(context.instructor, `${path}.context.instructor`, problems);
    if (isObject(context.contextActivities)) {
      for (const [kind, value] of Object.entries(context.contextActivities)) {
        const activities = Array.isArray(value) ? value : [value];
        activities.forEach((activity, i) => {
          checkObject(activity, `${path}.context.contextActivities.${kind}[${i}]`, problems);
        });
      }
    }
  }
  if (statement.timestamp !== undefined) {
    const ts = statement.timestamp;
    if (!(typeof ts === "string" && RFC3339.test(ts) && !Number.isNaN(Date.parse(ts))))
      problems.push(`${path}.timestamp: ${JSON.stringify(ts)} is not an RFC 3339 date-time with a time zone`);
    else if (/-00:00$/.test(ts)) problems.push(`${path}.timestamp: the offset -00:00 is not allowed`);
  }
}

function describeWarning(warning: RulrWarning): string {
  const path = warning.path.join(".");
  if (warning.keys)
    return `${path}: unknown properties ${warning.keys.map((k) => JSON.stringify(k)).join(", ")}`;
  const name = warning.constructor.name.replace(/Warning$/, "");
  const what = warning.typeName ? `expected ${warning.typeName}` : name;
  let data: string;
  try {
    data = JSON.stringify(warning.data) ?? "undefined";
  } catch {
    data = String(warning.data);
  }
  return `${path}: ${what} (got ${data.length > 80 ? `${data.slice(0, 77)}...` : data})`;
}

/** Every problem of one statement (empty when it is valid), as a conformant, strict LRS sees them. */
export function statementProblems(statement: unknown, reject: Map<string, string> = new Map()): string[] {
  if (!isObject(statement)) return ["statement: not a JSON object"];
  const problems: Problems = [];
  if (statement.id === undefined) problems.push("statement.id: missing (Lingua always sends its derived id)");
  else if (typeof statement.id !== "string" || !UUID.test(statement.id))
    problems.push(`statement.id: ${JSON.stringify(statement.id)} is not an RFC 4122 UUID`);
  if ("stored" in statement) problems.push("statement.stored: set by the LRS, never by a client");
  if ("authority" in statement) problems.push("statement.authority: set by the LRS, never by this client");
  checkBody(statement, "statement", problems);
  // Learning Locker's rules, except where ours already named the same property more precisely.
  const named = new Set(problems.map((p) => p.slice(0, p.indexOf(":"))));
  for (const warning of xapiValidation(statement))
    if (!named.has(warning.path.join("."))) problems.push(describeWarning(warning));
  const rejected = typeof statement.id === "string" ? reject.get(statement.id) : undefined;
  if (rejected !== undefined) problems.push(rejected);
  return [...new Set(problems)];
}

// ---------------------------------------------------------------------------------------------
// The server.

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  if (res.destroyed) return;
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
}

function parseAuth(header: string | undefined): LrsRequest["auth"] {
  if (!header) return null;
  const [scheme, value = ""] = header.split(/\s+/, 2);
  if (/^basic$/i.test(scheme ?? "")) {
    const decoded = Buffer.from(value, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon < 0) return { type: "basic", username: decoded, password: "" };
    return { type: "basic", username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  if (/^bearer$/i.test(scheme ?? "")) return { type: "bearer", token: value };
  return null;
}

function scriptKind(method: string, path: string): ScriptOn | null {
  if (path === "/xapi/statements") return method === "POST" ? "post_statements" : "get_statements";
  if (path === "/xapi/about") return "about";
  if (path === "/oauth/token") return "token";
  return null;
}

function takeScripted(instance: Instance, kind: ScriptOn | null): ScriptedFailure | null {
  const index = instance.script.findIndex((s) => s.on === "any" || (s.on ?? "post_statements") === kind);
  if (index < 0) return null;
  const entry = instance.script[index];
  if (!entry) return null;
  entry.left -= 1;
  if (entry.left <= 0) instance.script.splice(index, 1);
  return entry;
}

function authorised(instance: Instance, auth: LrsRequest["auth"]): boolean {
  if (auth?.type === "basic")
    return (
      instance.basic !== null &&
      auth.username === instance.basic.username &&
      auth.password === instance.basic.password
    );
  if (auth?.type === "bearer") {
    const expires = instance.tokens.get(auth.token);
    return expires !== undefined && expires > Date.now();
  }
  return false;
}

function issueToken(
  instance: Instance,
  req: IncomingMessage,
  raw: string,
): { status: number; body: unknown } {
  const form = new URLSearchParams(raw);
  const basic = parseAuth(req.headers.authorization);
  const clientId = basic?.type === "basic" ? basic.username : form.get("client_id");
  const clientSecret = basic?.type === "basic" ? basic.password : form.get("client_secret");
  if (!(req.headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded"))
    return {
      status: 400,
      body: {
        error: "invalid_request",
        error_description: "the body must be application/x-www-form-urlencoded",
      },
    };
  if (form.get("grant_type") !== "client_credentials")
    return { status: 400, body: { error: "unsupported_grant_type" } };
  const oauth = instance.oauth2;
  if (!oauth || clientId !== oauth.client_id || clientSecret !== oauth.client_secret)
    return { status: 401, body: { error: "invalid_client" } };
  const requested = form.get("scope");
  if (oauth.scope !== undefined && requested !== null && requested !== oauth.scope)
    return { status: 400, body: { error: "invalid_scope" } };
  const token = randomBytes(24).toString("base64url");
  instance.tokens.set(token, Date.now() + oauth.expires_in * 1000);
  instance.tokensIssued += 1;
  return {
    status: 200,
    body: {
      access_token: token,
      token_type: "Bearer",
      expires_in: oauth.expires_in,
      ...(oauth.scope ? { scope: oauth.scope } : {}),
    },
  };
}

function statementIdsOf(raw: string): string[] {
  try {
    const parsed = JSON.parse(raw);
    const list = Array.isArray(parsed) ? parsed : [parsed];
    return list.filter(isObject).flatMap((s) => (typeof s.id === "string" ? [s.id] : []));
  } catch {
    return [];
  }
}

/** POST /statements once credentials and version passed: the answer's status and body. */
function postStatements(
  instance: Instance,
  raw: string,
  version: string | null,
): { status: number; body: unknown } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return { status: 400, body: { error: "bad_request", message: "the body is not JSON" } };
  }
  const statements = Array.isArray(parsed) ? parsed : [parsed];
  if (statements.length === 0)
    return { status: 400, body: { error: "bad_request", message: "no statements" } };
  if (instance.maxPerRequest !== null && statements.length > instance.maxPerRequest)
    return {
      status: 413,
      body: {
        error: "payload_too_large",
        message: `${statements.length} statements in one request; at most ${instance.maxPerRequest}`,
      },
    };
  const problems = statements.flatMap((statement, i) => {
    const found = statementProblems(statement, instance.reject);
    if (found.length === 0) return [];
    const id = isObject(statement) ? statement.id : undefined;
    return [`Statement ${i} (id ${JSON.stringify(id)}): ${found.join("; ")}`];
  });
  if (problems.length > 0)
    return {
      status: 400,
      body: { error: "invalid_statement", message: problems.join(" | "), warnings: problems },
    };
  const ids = statements.map((s) => String((s as Record<string, unknown>).id));
  const twice = ids.find((id, i) => ids.indexOf(id) !== i);
  if (twice)
    return {
      status: 400,
      body: { error: "duplicate_id", message: `Statement id ${twice} appears twice in the batch` },
    };
  const conflicting = ids.find((id) => instance.stored.has(id) || instance.conflict.has(id));
  if (conflicting)
    return {
      status: 409,
      body: {
        error: "conflict",
        message: `Statement id ${conflicting} is already stored; nothing was stored`,
      },
    };
  const storedAt = new Date().toISOString();
  statements.forEach((statement, i) => {
    const id = ids[i] ?? "";
    instance.stored.set(id, {
      id,
      statement: statement as Record<string, unknown>,
      version,
      stored_at: storedAt,
    });
  });
  return { status: 200, body: ids };
}

function getStatements(instance: Instance, query: URLSearchParams): { status: number; body: unknown } {
  const statementId = query.get("statementId");
  if (statementId !== null) {
    const found = instance.stored.get(statementId);
    return found
      ? { status: 200, body: found.statement }
      : { status: 404, body: { error: "not_found", message: `no statement ${statementId}` } };
  }
  const limitText = query.get("limit") ?? "0";
  if (!/^\d+$/.test(limitText))
    return { status: 400, body: { error: "bad_request", message: "limit must be a non-negative integer" } };
  const all = [...instance.stored.values()].reverse().map((s) => s.statement);
  const limit = Number(limitText);
  return { status: 200, body: { statements: limit === 0 ? all : all.slice(0, limit), more: "" } };
}

export function startLrs(): Promise<{ url: string; close: () => Promise<void> }> {
  const instances = new Map<string, Instance>();
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://lrs");
    const segments = url.pathname.split("/");
    const [, kind, name] = segments;
    const raw = await readBody(req);
    if (kind === "control" && name) {
      if (req.method === "PUT") {
        const instance = instances.get(name) ?? freshInstance();
        configure(instance, JSON.parse(raw || "{}") as LrsOptions);
        instances.set(name, instance);
      }
      const instance = instances.get(name);
      if (!instance) return json(res, 404, { message: `no LRS instance ${name}` });
      const state: LrsState = {
        requests: instance.requests,
        statements: [...instance.stored.values()],
        posted: Object.fromEntries(instance.posted),
        tokens_issued: instance.tokensIssued,
      };
      return json(res, 200, state);
    }
    const instance = kind === "lrs" && name ? instances.get(name) : undefined;
    if (!instance) return json(res, 404, { message: "no such LRS instance" });

    const path = `/${segments.slice(3).join("/")}`.replace(/\/+$/, "");
    const method = req.method ?? "GET";
    const headers = Object.fromEntries(
      Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : (v ?? "")]),
    );
    const version = headers["x-experience-api-version"] ?? null;
    const auth = parseAuth(headers.authorization);
    const record: LrsRequest = {
      at: new Date().toISOString(),
      method,
      path,
      query: Object.fromEntries(url.searchParams),
      headers,
      version,
      auth,
      body: raw,
      statement_ids: method === "POST" && path === "/xapi/statements" ? statementIdsOf(raw) : [],
      status: 0,
    };
    instance.requests.push(record);
    for (const id of record.statement_ids) instance.posted.set(id, (instance.posted.get(id) ?? 0) + 1);
    const xapiHeaders = { "x-experience-api-version": instance.versions[0] ?? "1.0.3" };
    const answer = (status: number, body: unknown, extra: Record<string, string> = {}) => {
      record.status = status;
      json(res, status, body, { ...xapiHeaders, ...extra });
    };

    const scripted = takeScripted(instance, scriptKind(method, path));
    if (scripted?.hang) {
      const timer = setTimeout(() => req.socket.destroy(), scripted.hang_ms ?? DEFAULT_HANG_MS);
      res.on("close", () => clearTimeout(timer));
      return;
    }
    if (scripted) {
      record.status = scripted.status ?? 500;
      if (!res.destroyed)
        res
          .writeHead(record.status, {
            "content-type": "application/json",
            ...(scripted.retry_after !== undefined ? { "retry-after": String(scripted.retry_after) } : {}),
          })
          .end(scripted.body ?? JSON.stringify({ error: "scripted", message: `scripted ${record.status}` }));
      return;
    }

    if (path === "/oauth/token" && method === "POST") {
      const issued = issueToken(instance, req, raw);
      record.status = issued.status;
      return json(res, issued.status, issued.body, { "cache-control": "no-store" });
    }
    if (path === "/xapi/about" && method === "GET") return answer(200, { version: instance.versions });
    if (path !== "/xapi/statements")
      return answer(404, { error: "not_found", message: `no resource ${path}` });
    if (method !== "GET" && method !== "POST")
      return answer(405, { error: "method_not_allowed", message: `${method} is not supported here` });
    if (!authorised(instance, auth))
      return answer(
        401,
        { error: "unauthorized", message: auth ? "the credentials were refused" : "credentials required" },
        { "www-authenticate": instance.oauth2 ? 'Bearer realm="lrs"' : 'Basic realm="lrs"' },
      );
    if (version === null)
      return answer(400, { error: "bad_request", message: "the X-Experience-API-Version header is missing" });
    if (!instance.versions.includes(version))
      return answer(400, {
        error: "bad_request",
        message: `X-Experience-API-Version ${version} is not supported; this LRS speaks ${instance.versions.join(", ")}`,
      });
    const result =
      method === "POST"
        ? (headers["content-type"] ?? "").startsWith("application/json")
          ? postStatements(instance, raw, version)
          : { status: 400, body: { error: "bad_request", message: "Content-Type must be application/json" } }
        : getStatements(instance, url.searchParams);
    answer(
      result.status,
      result.body,
      method === "GET" ? { "x-experience-api-consistent-through": record.at } : {},
    );
  });
  return listenOnLoopback(server);
}

declare module "vitest" {
  export interface ProvidedContext {
    /** The loopback LRS of lrs-server.ts. */
    lrsUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const lrs = await startLrs();
  project.provide("lrsUrl", lrs.url);
  return () => lrs.close();
}
