// The LTI Advantage services of the loopback platform (platform-server.ts): Names and Role Provisioning
// (a roster answered in pages with a `Link: <…>; rel="next"` header) and AGS line items (list with
// `resource_id` / `tag` filters, create). Like an LMS, each checks the bearer token (issued by the
// platform's token endpoint, for the scope the service needs) and the media types, and records what
// it was asked. Kept apart from platform-server.ts, which calls in here from a few marked lines.
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

export const NRPS_SCOPE = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly";
export const LINE_ITEM_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem";
export const LINE_ITEM_READ_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly";
export const MEMBERSHIP_TYPE = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json";
export const LINE_ITEM_TYPE = "application/vnd.ims.lis.v2.lineitem+json";
export const LINE_ITEM_CONTAINER_TYPE = "application/vnd.ims.lis.v2.lineitemcontainer+json";

export interface ServiceRequest {
  service: "memberships" | "lineitems";
  method: string;
  search: string;
  accept: string | null;
  content_type: string | null;
  /** The scope the bearer token was issued for; null for a token the platform never issued. */
  token_scope: string | null;
  body: unknown;
  status: number;
}

interface Services {
  tokenScopes: Map<string, string>;
  roster: unknown[];
  rosterPageSize: number;
  /** The `next` links point here instead when set (a platform that sends the token elsewhere). */
  rosterNextOrigin: string | null;
  lineItems: Record<string, unknown>[];
  requests: ServiceRequest[];
}

const all = new WeakMap<object, Services>();

function servicesOf(platform: object): Services {
  let services = all.get(platform);
  if (!services) {
    services = {
      tokenScopes: new Map(),
      roster: [],
      rosterPageSize: 2,
      rosterNextOrigin: null,
      lineItems: [],
      requests: [],
    };
    all.set(platform, services);
  }
  return services;
}

/** The token endpoint issued `token` for `scope` (space-separated scopes). */
export function recordTokenScope(platform: object, token: string, scope: string | null): void {
  servicesOf(platform).tokenScopes.set(token, scope ?? "");
}

/** The control PUT's service fields: `roster`, `roster_page_size`, `roster_next_origin`, `line_items`. */
export function configureServices(platform: object, body: Record<string, unknown>): void {
  const services = servicesOf(platform);
  if (Array.isArray(body.roster)) services.roster = body.roster;
  if (typeof body.roster_page_size === "number") services.rosterPageSize = body.roster_page_size;
  if ("roster_next_origin" in body) services.rosterNextOrigin = (body.roster_next_origin as string) ?? null;
  if (Array.isArray(body.line_items)) services.lineItems = body.line_items as Record<string, unknown>[];
}

/** What the control GET adds to the platform's state. */
export function servicesState(platform: object, base: string) {
  const services = servicesOf(platform);
  return {
    context_memberships_url: `${base}/memberships`,
    service_requests: services.requests,
    line_items: services.lineItems,
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Answers `/p/{name}/memberships` and `/p/{name}/lineitems` (the list and the creation); false for any
 * other path, which platform-server.ts answers as before.
 */
export async function handleServices(
  platform: object,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  parts: string[],
  base: string,
): Promise<boolean> {
  const service =
    parts[2] === "memberships" && !parts[3]
      ? "memberships"
      : parts[2] === "lineitems" && !parts[3]
        ? "lineitems"
        : null;
  if (!service) return false;
  const services = servicesOf(platform);
  const raw = req.method === "POST" ? await readBody(req) : "";
  const token = (req.headers.authorization ?? "").replace(/^Bearer /, "");
  const record: ServiceRequest = {
    service,
    method: req.method ?? "",
    search: url.search,
    accept: req.headers.accept ?? null,
    content_type: req.headers["content-type"] ?? null,
    token_scope: services.tokenScopes.get(token) ?? null,
    body: raw ? JSON.parse(raw) : null,
    status: 0,
  };
  services.requests.push(record);
  const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => {
    record.status = status;
    res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
    return true;
  };
  const scopes = (record.token_scope ?? "").split(" ");
  if (record.token_scope === null) return answer(401, { error: "invalid_token" });

  if (service === "memberships") {
    if (req.method !== "GET") return answer(405, { error: "method not allowed" });
    if (!scopes.includes(NRPS_SCOPE)) return answer(403, { error: "insufficient_scope" });
    if (!(record.accept ?? "").includes(MEMBERSHIP_TYPE)) return answer(406, { error: "not acceptable" });
    const role = url.searchParams.get("role");
    const members = role
      ? services.roster.filter((m) =>
          ((m as { roles?: string[] }).roles ?? []).some((r) => r === role || r.endsWith(`#${role}`)),
        )
      : services.roster;
    const size = Number(url.searchParams.get("limit") ?? services.rosterPageSize) || services.rosterPageSize;
    const offset = Number(url.searchParams.get("offset") ?? 0);
    const page = members.slice(offset, offset + size);
    const headers: Record<string, string> = { "content-type": MEMBERSHIP_TYPE };
    if (offset + size < members.length) {
      const next = new URL(
        services.rosterNextOrigin ? url.pathname : `${base}/memberships`,
        services.rosterNextOrigin ?? undefined,
      );
      next.search = url.search;
      next.searchParams.set("offset", String(offset + size));
      next.searchParams.set("limit", String(size));
      headers.link = `<${next}>; rel="next", <${base}/memberships>; rel="first"`;
    }
    return answer(
      200,
      {
        id: `${base}/memberships`,
        context: { id: "ctx-1", label: "SPAN101", title: "Spanish" },
        members: page,
      },
      headers,
    );
  }

  if (req.method === "GET") {
    if (!scopes.includes(LINE_ITEM_SCOPE) && !scopes.includes(LINE_ITEM_READ_SCOPE))
      return answer(403, { error: "insufficient_scope" });
    if (!(record.accept ?? "").includes(LINE_ITEM_CONTAINER_TYPE))
      return answer(406, { error: "not acceptable" });
    const resourceId = url.searchParams.get("resource_id");
    const tag = url.searchParams.get("tag");
    const items = services.lineItems.filter(
      (item) => (!resourceId || item.resourceId === resourceId) && (!tag || item.tag === tag),
    );
    return answer(200, items, { "content-type": LINE_ITEM_CONTAINER_TYPE });
  }
  if (req.method === "POST") {
    if (!scopes.includes(LINE_ITEM_SCOPE)) return answer(403, { error: "insufficient_scope" });
    if (!(record.content_type ?? "").startsWith(LINE_ITEM_TYPE))
      return answer(415, { error: "unsupported media type" });
    const body = record.body as Record<string, unknown>;
    if (typeof body?.label !== "string" || typeof body.scoreMaximum !== "number" || body.scoreMaximum <= 0)
      return answer(400, { error: "label and a positive scoreMaximum are required" });
    const item = { ...body, id: `${base}/lineitems/${randomUUID()}` };
    services.lineItems.push(item);
    return answer(201, item, { "content-type": LINE_ITEM_TYPE });
  }
  return answer(405, { error: "method not allowed" });
}
