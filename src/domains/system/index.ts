import { Hono } from "hono";
import type { AppEnv } from "../../env";
import { applyApiConventions } from "../../platform/http/conventions";
import { registerDocsPage } from "./routes/docs-page";
import { registerErrorsPage } from "./routes/errors-page";
import { registerHealthz } from "./routes/healthz";
import { registerOpenApiDocument } from "./routes/openapi-document";

/**
 * Liveness, this API's OpenAPI document, its reference page and its error reference, one route file
 * each. Plain Hono: a liveness check loads no schema library, and the document is built on its first
 * request from the route groups that `groupApps` hands over (the app's, so that this domain never
 * imports the app that routes to it). The document and the pages share the public catalogue's per-IP limit;
 * `/healthz` has none, so that monitors and load balancers are never refused.
 */
export function systemApp(groupApps: () => Promise<readonly Hono<AppEnv>[]>): Hono<AppEnv> {
  return applyApiConventions(new Hono<AppEnv>(), (app) => {
    registerHealthz(app);
    registerOpenApiDocument(app, groupApps);
    registerDocsPage(app);
    registerErrorsPage(app);
  });
}
