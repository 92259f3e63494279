import { Hono } from "hono";
import { cors } from "hono/cors";
import type { AppEnv } from "../../env";
import { applyApiConventions } from "../../platform/http/conventions";

/**
 * Liveness, this API's OpenAPI document and its reference page. Plain Hono: a liveness check loads
 * no schema library, and the document (which needs every route group) is built on its first request.
 */
export function systemApp(): Hono<AppEnv> {
  return applyApiConventions(new Hono<AppEnv>(), (app) => {
    app.get("/healthz", (c) => c.json({ status: "ok" as const }, 200));

    let document: Promise<Record<string, unknown>> | null = null;
    app.get("/api/openapi.json", cors({ origin: "*", allowMethods: ["GET"] }), async (c) => {
      document ??= import("./document")
        .then(({ buildDocument }) => buildDocument())
        .catch((error: unknown) => {
          document = null;
          throw error;
        });
      const body = await document;
      c.header("Cache-Control", "public, max-age=300");
      return c.json(body, 200);
    });

    app.get("/api/docs", async (c) => (await import("./docs-page")).docsPage(c));
  });
}
