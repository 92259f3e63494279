import { appForGroup, ROUTE_GROUPS } from "../../src/app";
import { callJson } from "./api";

/** One documented operation of the served OpenAPI document, as the authorization suite reads it. */
export interface Operation {
  /** `GET /api/institutions/{id}`: the key of every table in the suites that use this. */
  name: string;
  method: string;
  /** The OpenAPI path template, `{param}` style. */
  path: string;
  /** Whether the operation requires a bearer token (its `security` names `bearerAuth`). */
  authenticated: boolean;
  /** Its `x-required-ability`, or null (public, or any valid token). */
  ability: string | null;
  /** The names of its path parameters, in path order. */
  pathParams: string[];
  /** The media types its request body accepts (empty without a body). */
  bodyTypes: string[];
}

/** Every operation of `GET /api/openapi.json`, in document order. */
export async function documentedOperations(): Promise<Operation[]> {
  const { res, body: doc } = await callJson("/api/openapi.json");
  if (res.status !== 200) throw new Error(`GET /api/openapi.json answered ${res.status}`);
  return Object.entries<any>(doc.paths).flatMap(([path, methods]) =>
    Object.entries<any>(methods).map(([method, op]): Operation => {
      const upper = method.toUpperCase();
      return {
        name: `${upper} ${path}`,
        method: upper,
        path,
        authenticated: (op.security ?? []).some((s: Record<string, unknown>) => "bearerAuth" in s),
        ability: op["x-required-ability"] ?? null,
        pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!),
        bodyTypes: Object.keys(op.requestBody?.content ?? {}),
      };
    }),
  );
}

/**
 * Every route the route groups of `src/app.ts` serve, as `METHOD /path/{param}`: what the worker
 * answers, whether or not the document shows it. Middleware (`ALL`, or a path with `*`) is left out.
 */
export async function servedRoutes(): Promise<string[]> {
  const names = new Set<string>();
  for (const group of ROUTE_GROUPS) {
    const app = await appForGroup(group);
    for (const route of app.routes) {
      if (route.method === "ALL" || route.path.includes("*")) continue;
      names.add(`${route.method} ${route.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")}`);
    }
  }
  return [...names];
}

/** The path with each `{param}` replaced by its (URL-encoded) value; a missing value is an error. */
export function fillPath(path: string, params: Record<string, string>): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`no value for {${name}} in ${path}`);
    return encodeURIComponent(value);
  });
}

/** Runs `work` over `items`, `size` at a time (the machine is small, the rate limits exact). */
export async function inBatches<T, R>(
  items: readonly T[],
  size: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) {
    out.push(...(await Promise.all(items.slice(i, i + size).map(work))));
  }
  return out;
}
