/** What this reads of an app: its route table (Hono's `app.routes`). */
interface RouteTable {
  routes: readonly { method: string; path: string }[];
}

interface RouteShape {
  pattern: RegExp;
  methods: Set<string>;
}

/**
 * Hono answers an unknown method like an unknown path; this tells them apart so that a wrong method
 * on a real path gets 405 with `Allow`. Built once, from the app's own route table.
 */
export function allowedMethodsResolver(app: RouteTable): (path: string) => string[] {
  let shapes: RouteShape[] | null = null;
  return (path) => {
    shapes ??= build(app);
    const allowed = new Set<string>();
    for (const shape of shapes) if (shape.pattern.test(path)) for (const m of shape.methods) allowed.add(m);
    return [...allowed].sort();
  };
}

function build(app: RouteTable): RouteShape[] {
  const byPath = new Map<string, Set<string>>();
  for (const route of app.routes) {
    if (route.method === "ALL" || route.path.includes("*")) continue;
    const methods = byPath.get(route.path) ?? new Set<string>();
    methods.add(route.method);
    if (route.method === "GET") methods.add("HEAD");
    byPath.set(route.path, methods);
  }
  return [...byPath].map(([path, methods]) => ({ pattern: routePathPattern(path), methods }));
}

/** The paths a Hono route path (`/api/institutions/:id/members/bulk`) matches: each parameter one segment. */
export function routePathPattern(path: string): RegExp {
  return new RegExp(
    `^${path.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\\?:[A-Za-z_][A-Za-z0-9_]*/g, "[^/]+")}$`,
  );
}
