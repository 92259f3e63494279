import { Hono } from "hono";
import { getPath } from "hono/utils/url";
import * as dashboard from "./dashboard/prefixes";
import * as auth from "./domains/auth/prefixes";
import * as billing from "./domains/billing/prefixes";
import * as catalog from "./domains/catalog/prefixes";
import * as content from "./domains/content/prefixes";
import * as events from "./domains/events/prefixes";
import * as dataExports from "./domains/exports/prefixes";
import * as institutions from "./domains/institutions/prefixes";
import * as lti from "./domains/lti/prefixes";
import * as members from "./domains/members/prefixes";
import * as progress from "./domains/progress/prefixes";
import * as scim from "./domains/scim/prefixes";
import * as system from "./domains/system/prefixes";
import * as tokens from "./domains/tokens/prefixes";
import * as webhooks from "./domains/webhooks/prefixes";
import * as xapi from "./domains/xapi/prefixes";
import type { AppEnv } from "./env";
import { applyApiConventions } from "./platform/http/conventions";
import type { ApiApp } from "./platform/openapi";

export type GroupApp = Hono<AppEnv>;

/**
 * The API is split into route groups, each its own app, imported and built on the first request to
 * one of its paths: a fresh isolate evaluates only the schemas and handlers of the groups it is
 * asked for, and the module's top level builds nothing. A group answers its prefixes — the path
 * itself and everything below it — and groups never share a path, so each group's app sees every
 * method of its paths (405 with `Allow` stays exact). The prefixes come from each domain's
 * `prefixes.ts`, a module without imports that its route modules build their paths from, so this
 * file knows them without loading any route; a test holds every route to its group.
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
    prefixes: system.PREFIXES,
    build: async () => (await import("./domains/system")).systemApp(allGroupApps),
  },
  {
    name: "auth",
    prefixes: auth.PREFIXES,
    // SSO sign-in answers below `/api/auth/sso`, inside this group's prefix.
    build: documented(
      async () => (await import("./domains/auth")).registerAuth,
      async () => (await import("./domains/sso")).registerSsoSignIn,
    ),
  },
  {
    name: "tokens",
    prefixes: tokens.PREFIXES,
    build: documented(async () => (await import("./domains/tokens")).registerTokens),
  },
  {
    // Content and progress share `/api/courses/…` (a course and its lesson progress), so they load together.
    name: "learning",
    prefixes: [...content.PREFIXES, ...progress.PREFIXES],
    build: documented(
      async () => (await import("./domains/content")).registerContent,
      async () => (await import("./domains/progress")).registerProgress,
    ),
  },
  {
    name: "catalog",
    prefixes: catalog.PREFIXES,
    build: documented(async () => (await import("./domains/catalog")).registerCatalog),
  },
  {
    name: "webhooks",
    prefixes: webhooks.PREFIXES,
    build: documented(async () => (await import("./domains/webhooks")).registerWebhooks),
  },
  {
    name: "events",
    prefixes: events.PREFIXES,
    build: documented(async () => (await import("./domains/events")).registerEvents),
  },
  {
    // Members share `/api/institutions/{id}/…` with their institution, so the two load together.
    name: "institutions",
    prefixes: [...institutions.PREFIXES, ...members.PREFIXES],
    build: documented(
      async () => (await import("./domains/institutions")).registerInstitutions,
      async () => (await import("./domains/members")).registerMembers,
      async () => (await import("./domains/scim")).registerScim,
      async () => (await import("./domains/sso")).registerSsoLog,
      async () => (await import("./domains/sso/saml")).registerSamlInstitutionRoutes,
    ),
  },
  {
    name: "exports",
    prefixes: dataExports.PREFIXES,
    build: documented(async () => (await import("./domains/exports")).registerExports),
  },
  {
    name: "lti",
    prefixes: lti.PREFIXES,
    build: documented(async () => (await import("./domains/lti")).registerLti),
  },
  {
    name: "xapi",
    prefixes: xapi.PREFIXES,
    build: documented(async () => (await import("./domains/xapi")).registerXapi),
  },
  {
    name: "billing",
    prefixes: billing.PREFIXES,
    build: documented(async () => (await import("./domains/billing")).registerBilling),
  },
];

/**
 * The admin dashboard: HTML pages for people over the domains' services, not part of the API — so
 * not among ROUTE_GROUPS, whose routes the OpenAPI document and the API's route-table tests walk.
 */
export const DASHBOARD_GROUP: RouteGroup = {
  name: "dashboard",
  prefixes: dashboard.PREFIXES,
  build: async () => (await import("./dashboard")).dashboardApp(),
};

/**
 * The SCIM 2.0 service an identity provider provisions members through (`/scim/v2`): SCIM's own
 * media type, error schema and bearer tokens, so not among ROUTE_GROUPS either (docs/design/scim.md).
 */
export const SCIM_GROUP: RouteGroup = {
  name: "scim",
  prefixes: scim.SCIM_PREFIXES,
  build: async () => (await import("./domains/scim/v2/app")).scimApp(),
};
const ROUTED: readonly RouteGroup[] = [...ROUTE_GROUPS, DASHBOARD_GROUP, SCIM_GROUP];

/** Paths no group claims: an app without routes, for the same 404 problem every group sends. */
const UNROUTED: RouteGroup = {
  name: "unrouted",
  prefixes: [],
  build: async () => applyApiConventions(new Hono<AppEnv>(), () => {}),
};

export function groupForPath(path: string): RouteGroup {
  for (const group of ROUTED) {
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
