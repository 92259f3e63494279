import { Hono } from "hono";
import { cors } from "hono/cors";
import type { AppEnv } from "../../env";
import { applyApiConventions } from "../../platform/http/conventions";
import { limitByIpAtEdge } from "../../platform/ratelimit/edge-ip-limit";
import { docsPage } from "./docs-page";
import { DOCS, HEALTHZ, OPENAPI_DOCUMENT } from "./prefixes";

/**
 * Liveness, this API's OpenAPI document and its reference page. Plain Hono: a liveness check loads
 * no schema library, and the document is built on its first request from the route groups that
 * `groupApps` hands over (the app's, so that this domain never imports the app that routes to it).
 * The document and the page share the public catalogue's per-IP limit; `/healthz` has none, so that
 * monitors and load balancers are never refused.
 */
export function systemApp(groupApps: () => Promise<readonly Hono<AppEnv>[]>): Hono<AppEnv> {
  return applyApiConventions(new Hono<AppEnv>(), (app) => {
    app.get(HEALTHZ, (c) => c.json({ status: "ok" as const }, 200));

    // Kept serialised: the document is large and never changes within an isolate.
    let document: Promise<string> | null = null;
    const limitPerIp = limitByIpAtEdge("PUBLIC_RATE_LIMITER");
    app.get(OPENAPI_DOCUMENT, cors({ origin: "*", allowMethods: ["GET"] }), limitPerIp, async (c) => {
      document ??= Promise.all([import("./document"), groupApps()])
        .then(([{ buildDocument }, apps]) => JSON.stringify(buildDocument(apps)))
        .catch((error: unknown) => {
          document = null;
          throw error;
        });
      const body = await document;
      return c.body(body, 200, {
        "Content-Type": "application/json",
        "Cache-Control": "public, max-age=300",
      });
    });

    app.get(DOCS, limitPerIp, () => docsPage());
  });
}
