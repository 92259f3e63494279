import type { Hono } from "hono";
import { cors } from "hono/cors";
import type { AppEnv } from "../../../env";
import { limitByIpAtEdge } from "../../../platform/ratelimit/edge-ip-limit";
import { OPENAPI_DOCUMENT } from "../prefixes";

/**
 * This API's OpenAPI document, built on its first request from the route groups that `groupApps`
 * hands over (the app's, so that this domain never imports the app that routes to it), then kept
 * serialised: it is large and never changes within an isolate. The public catalogue's per-IP limit.
 */
export function registerOpenApiDocument(
  app: Hono<AppEnv>,
  groupApps: () => Promise<readonly Hono<AppEnv>[]>,
) {
  let document: Promise<string> | null = null;
  app.get(
    OPENAPI_DOCUMENT,
    cors({ origin: "*", allowMethods: ["GET"] }),
    limitByIpAtEdge("PUBLIC_RATE_LIMITER"),
    async (c) => {
      document ??= Promise.all([import("../document"), groupApps()])
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
    },
  );
}
