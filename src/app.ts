import { Hono } from "hono";
import { getPath } from "hono/utils/url";
import type { AppEnv } from "./env";
import { applyApiConventions } from "./platform/http/conventions";
import type { ApiApp } from "./platform/openapi";

export type GroupApp = Hono<AppEnv>;

/**
 * The API is split into route groups, each its own app, imported and built on the first request to
 * one of its paths: a fresh isolate evaluates only the schemas and handlers of the groups it is
 * asked for, and the module's top level builds nothing. A group answers its prefixes — the path
 * itself and everything below it — and groups never share a path, so each group's app sees every
 * method of its paths (405 with `Allow` stays exact). A test holds every route to its group.
 */
export interface RouteGroup {
  name: string;
  prefixes: readonly string[];
  build: () => Promise<GroupApp>;
}

/** A group of documented operations (zod schemas, OpenAPI registry): the usual kind. */
function documented(...loaders: (() => Promise<(app: ApiApp) => void>)[]): () => Promise<GroupApp> {
  return async () => {
    const [{ createApiApp }, ...registers] = await Promise.all([
      import("./platform/openapi"),
      ...loaders.map((load) => load()),
    ]);
    return createApiApp((app) => {
      for (const register of registers) register(app);
    });
  };
}

export const ROUTE_GROUPS: readonly RouteGroup[] = [
  {
    // Liveness, the reference page and the OpenAPI document: plain Hono, so that a liveness check
    // on a fresh isolate loads no schema library; the document loads every group when first asked.
    name: "system",
    prefixes: ["/healthz", "/api/openapi.json", "/api/docs"],
    build: async () => (await import("./domains/system")).systemApp(allGroupApps),
  },
  {
    name: "auth",
    prefixes: ["/api/auth"],
    build: documented(async () => (await import("./domains/auth")).registerAuth),
  },
  {
    name: "tokens",
    prefixes: ["/api/integrations/tokens"],
    build: documented(async () => (await import("./domains/tokens")).registerTokens),
  },
  {
    // Content and progress share `/api/courses/…` (a course and its lesson progress), so they load together.
    name: "learning",
    prefixes: [
      "/api/courses",
      "/api/lessons",
      "/api/trainings",
      "/api/trainingItems",
      "/api/progress",
      "/api/progress-history",
      "/api/cefr",
      "/api/learning-insights",
      "/api/gamification",
      "/api/stats",
    ],
    build: documented(
      async () => (await import("./domains/content")).registerContent,
      async () => (await import("./domains/progress")).registerProgress,
    ),
  },
  {
    name: "catalog",
    prefixes: ["/api/public"],
    build: documented(async () => (await import("./domains/catalog")).registerCatalog),
  },
  {
    name: "webhooks",
    prefixes: ["/api/integrations/webhooks"],
    build: documented(async () => (await import("./domains/webhooks")).registerWebhooks),
  },
  {
    name: "events",
    prefixes: ["/api/integrations/events"],
    build: documented(async () => (await import("./domains/events")).registerEvents),
  },
  {
    name: "institutions",
    prefixes: ["/api/institutions"],
    build: documented(async () => (await import("./domains/institutions")).registerInstitutions),
  },
  {
    name: "exports",
    prefixes: ["/api/integrations/exports"],
    build: documented(async () => (await import("./domains/exports")).registerExports),
  },
  {
    name: "lti",
    prefixes: ["/api/lti", "/api/integrations/lti-consumers", "/api/integrations/lti-launches"],
    build: documented(async () => (await import("./domains/lti")).registerLti),
  },
];

/** Paths no group claims: an app without routes, for the same 404 problem every group sends. */
const UNROUTED: RouteGroup = {
  name: "unrouted",
  prefixes: [],
  build: async () => applyApiConventions(new Hono<AppEnv>(), () => {}),
};

export function groupForPath(path: string): RouteGroup {
  for (const group of ROUTE_GROUPS) {
    for (const prefix of group.prefixes) {
      if (
        path.startsWith(prefix) &&
        (path.length === prefix.length || path.charCodeAt(prefix.length) === 47) /* "/" */
      )
        return group;
    }
  }
  return UNROUTED;
}

const built = new Map<RouteGroup, GroupApp>();
const building = new Map<RouteGroup, Promise<GroupApp>>();

/** The group's app, built once per isolate; concurrent first requests share one build. */
export function appForGroup(group: RouteGroup): GroupApp | Promise<GroupApp> {
  const app = built.get(group);
  if (app) return app;
  let pending = building.get(group);
  if (!pending) {
    pending = group.build().then((fresh) => {
      built.set(group, fresh);
      return fresh;
    });
    // A failed import is not remembered: the next request tries again.
    pending.finally(() => building.delete(group)).catch(() => undefined);
    building.set(group, pending);
  }
  return pending;
}

export function appForRequest(request: Request): GroupApp | Promise<GroupApp> {
  return appForGroup(groupForPath(getPath(request)));
}

/** Every group's app, in the order of ROUTE_GROUPS (the OpenAPI document's order). */
export function allGroupApps(): Promise<GroupApp[]> {
  return Promise.all(ROUTE_GROUPS.map(appForGroup));
}
