import { type Context, Hono } from "hono";
import type { AppEnv } from "../../../env";
import { ApiError } from "../../../platform/errors";
import { provideContext } from "../../../platform/http/context-middleware";
import { responseHeaders } from "../../../platform/http/middleware";
import { SCIM_CONTENT_TYPE, ScimError, scimErrorResponse, toScimError } from "../errors";
import { SCIM_BASE } from "../prefixes";
import { authenticateScim } from "./auth";
import { listResourceTypes, listSchemas, resourceType, schema, serviceProviderConfig } from "./discovery";
import { GROUP_FILTER_ATTRIBUTES, parseFilter, USER_FILTER_ATTRIBUTES } from "./filter";
import { getGroup, listGroups } from "./group-read";
import { createGroup, deleteGroup, patchGroup, replaceGroup } from "./groups";
import { type Json, listResponse, MAX_COUNT } from "./resources";
import { getUser, listUsers } from "./user-read";
import { createUser, deleteUser, patchUser, replaceUser } from "./users";

/** The largest SCIM request body read (a PUT of a Group with every member is the largest). */
const MAX_BODY_BYTES = 1024 * 1024;

function scimJson(
  c: Context<AppEnv>,
  body: Json,
  status: 200 | 201 = 200,
  headers: Record<string, string> = {},
) {
  return c.newResponse(JSON.stringify(body), status, { ...headers, "Content-Type": SCIM_CONTENT_TYPE });
}

/** The request's JSON body: `application/scim+json` (or `application/json`), at most MAX_BODY_BYTES. */
async function bodyOf(c: Context<AppEnv>): Promise<unknown> {
  const type = (c.req.header("Content-Type") ?? "").split(";")[0]?.trim().toLowerCase();
  if (type && type !== SCIM_CONTENT_TYPE && type !== "application/json")
    throw new ScimError(415, `Send the body as ${SCIM_CONTENT_TYPE} (or application/json), not ${type}.`);
  const declared = Number(c.req.header("Content-Length") ?? "0");
  if (declared > MAX_BODY_BYTES) throw new ScimError(413, "The body is larger than 1 MB.");
  const text = await c.req.text();
  if (text.length > MAX_BODY_BYTES) throw new ScimError(413, "The body is larger than 1 MB.");
  try {
    return JSON.parse(text);
  } catch {
    throw new ScimError(400, "The body is not JSON.", "invalidSyntax");
  }
}

function integerQuery(c: Context<AppEnv>, name: string): number | undefined {
  const raw = c.req.query(name);
  if (raw === undefined || raw === "") return undefined;
  if (!/^-?\d+$/.test(raw)) throw new ScimError(400, `${name} must be an integer.`, "invalidValue");
  return Number(raw);
}

/** RFC 7644 §3.4.2.4: `startIndex` below 1 is 1; `count` below 0 is 0, above MAX_COUNT is MAX_COUNT. */
function pageOf(c: Context<AppEnv>) {
  const startIndex = Math.max(1, integerQuery(c, "startIndex") ?? 1);
  const count = Math.min(MAX_COUNT, Math.max(0, integerQuery(c, "count") ?? MAX_COUNT));
  return { startIndex, count };
}

/** Whether the response should carry a Group's members (`excludedAttributes=members` or `attributes` without it: not). */
function wantsMembers(c: Context<AppEnv>): boolean {
  const list = (name: string) =>
    (c.req.query(name) ?? "")
      .split(",")
      .map((a) => a.trim().toLowerCase())
      .filter(Boolean);
  if (list("excludedAttributes").includes("members")) return false;
  const attributes = list("attributes");
  return attributes.length === 0 || attributes.includes("members");
}

/** Attributes every answer keeps whatever `attributes` or `excludedAttributes` say (RFC 7643 §7 "returned: always"). */
const ALWAYS = new Set(["schemas", "id", "meta"]);

/**
 * RFC 7644 §3.4.2.5: `attributes` keeps only the named top-level attributes (and the ones always
 * returned); `excludedAttributes` drops the named ones. A sub-attribute (`name.givenName`) names its
 * attribute; an extension's attribute (`urn:…:User:department`) its extension.
 */
function project(c: Context<AppEnv>, resource: Json): Json {
  const names = (name: string) =>
    (c.req.query(name) ?? "")
      .split(",")
      .map((a) => a.trim().toLowerCase())
      .filter(Boolean)
      .map((a) => (a.startsWith("urn:") ? a.slice(0, a.lastIndexOf(":")) : (a.split(".")[0] as string)));
  const only = names("attributes");
  const excluded = names("excludedAttributes");
  if (only.length === 0 && excluded.length === 0) return resource;
  return Object.fromEntries(
    Object.entries(resource).filter(([key]) => {
      const name = key.toLowerCase();
      if (ALWAYS.has(name)) return true;
      if (only.length > 0) return only.includes(name);
      return !excluded.includes(name);
    }),
  );
}

function notAllowed(allowed: string) {
  return () => {
    throw new ScimError(405, `Use ${allowed} here.`, undefined, { Allow: allowed });
  };
}

/**
 * The SCIM 2.0 service at `/scim/v2` (RFC 7644): Users, Groups and the discovery endpoints, for an
 * identity provider holding a SCIM token. Its own app: SCIM's error schema and media type instead of
 * problem+json, its own bearer authentication, outside the OpenAPI document (docs/design/scim.md).
 */
export function scimApp(): Hono<AppEnv> {
  const app = new Hono<AppEnv>().basePath(SCIM_BASE);
  app.use("*", responseHeaders);
  app.use("*", provideContext);
  app.use("*", authenticateScim);

  app.get("/ServiceProviderConfig", (c) => scimJson(c, serviceProviderConfig(c.var.scim.base)));
  app.get("/ResourceTypes", (c) => scimJson(c, listResourceTypes(c.var.scim.base)));
  app.get("/ResourceTypes/:id", (c) => scimJson(c, resourceType(c.var.scim.base, c.req.param("id"))));
  app.get("/Schemas", async (c) => scimJson(c, await listSchemas(c.var.scim.base)));
  app.get("/Schemas/:id", async (c) => scimJson(c, await schema(c.var.scim.base, c.req.param("id"))));
  for (const path of [
    "/ServiceProviderConfig",
    "/ResourceTypes",
    "/ResourceTypes/:id",
    "/Schemas",
    "/Schemas/:id",
  ])
    app.all(path, notAllowed("GET"));

  app.get("/Users", async (c) => {
    const expression = c.req.query("filter");
    const filter = expression ? await parseFilter(expression, USER_FILTER_ATTRIBUTES) : null;
    const page = pageOf(c);
    const { total, resources } = await listUsers(c.var.ctx, c.var.scim, { filter, ...page });
    return scimJson(
      c,
      listResponse(
        resources.map((r) => project(c, r)),
        total,
        page.startIndex,
      ),
    );
  });
  app.post("/Users", async (c) => {
    const user = await createUser(c.var.ctx, c.var.scim, await bodyOf(c));
    return scimJson(c, user, 201, { Location: (user.meta as Json).location as string });
  });
  app.all("/Users", notAllowed("GET, POST"));
  app.get("/Users/:id", async (c) =>
    scimJson(c, project(c, await getUser(c.var.ctx, c.var.scim, c.req.param("id")))),
  );
  app.put("/Users/:id", async (c) =>
    scimJson(c, await replaceUser(c.var.ctx, c.var.scim, c.req.param("id"), await bodyOf(c))),
  );
  app.patch("/Users/:id", async (c) =>
    scimJson(c, await patchUser(c.var.ctx, c.var.scim, c.req.param("id"), await bodyOf(c))),
  );
  app.delete("/Users/:id", async (c) => {
    await deleteUser(c.var.ctx, c.var.scim, c.req.param("id"));
    return c.body(null, 204);
  });
  app.all("/Users/:id", notAllowed("GET, PUT, PATCH, DELETE"));

  app.get("/Groups", async (c) => {
    const expression = c.req.query("filter");
    const filter = expression ? await parseFilter(expression, GROUP_FILTER_ATTRIBUTES) : null;
    const page = pageOf(c);
    const { total, resources } = await listGroups(c.var.ctx, c.var.scim, {
      filter,
      ...page,
      withMembers: wantsMembers(c),
    });
    return scimJson(
      c,
      listResponse(
        resources.map((r) => project(c, r)),
        total,
        page.startIndex,
      ),
    );
  });
  app.post("/Groups", async (c) => {
    const group = await createGroup(c.var.ctx, c.var.scim, await bodyOf(c));
    return scimJson(c, group, 201, { Location: (group.meta as Json).location as string });
  });
  app.all("/Groups", notAllowed("GET, POST"));
  app.get("/Groups/:id", async (c) =>
    scimJson(c, project(c, await getGroup(c.var.ctx, c.var.scim, c.req.param("id"), wantsMembers(c)))),
  );
  app.put("/Groups/:id", async (c) =>
    scimJson(c, await replaceGroup(c.var.ctx, c.var.scim, c.req.param("id"), await bodyOf(c))),
  );
  app.patch("/Groups/:id", async (c) => {
    await patchGroup(c.var.ctx, c.var.scim, c.req.param("id"), await bodyOf(c));
    // RFC 7644 §3.5.2: 204 unless the client asked for attributes back (Entra and Okta accept both).
    if (c.req.query("attributes") || c.req.query("excludedAttributes"))
      return scimJson(c, await getGroup(c.var.ctx, c.var.scim, c.req.param("id"), wantsMembers(c)));
    return c.body(null, 204);
  });
  app.delete("/Groups/:id", async (c) => {
    await deleteGroup(c.var.ctx, c.var.scim, c.req.param("id"));
    return c.body(null, 204);
  });
  app.all("/Groups/:id", notAllowed("GET, PUT, PATCH, DELETE"));

  app.notFound((c) =>
    scimErrorResponse(c, new ScimError(404, `No SCIM endpoint ${c.req.method} ${c.req.path}.`)),
  );
  app.onError((error, c) => {
    const scim = toScimError(error);
    // A move's switch is expected, brief and retried by the identity provider: not worth an error log.
    const moving = error instanceof ApiError && error.code === "institution_moving";
    if (scim.status >= 500 && !moving)
      console.error(
        JSON.stringify({
          level: "error",
          request_id: c.get("requestId"),
          path: c.req.path,
          error: error instanceof Error ? error.stack : String(error),
        }),
      );
    return scimErrorResponse(c, scim);
  });
  return app;
}
