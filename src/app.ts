import { OpenAPIHono } from "@hono/zod-openapi";
import { registerAuth } from "./domains/auth";
import { registerCatalog } from "./domains/catalog";
import { registerContent } from "./domains/content";
import { registerExports } from "./domains/exports";
import { registerSystem } from "./domains/system";
import { registerTokens } from "./domains/tokens";
import { registerProgress } from "./domains/progress";
import { registerEvents } from "./domains/events";
import { registerWebhooks } from "./domains/webhooks";
import type { AppEnv } from "./env";
import { d1Meter } from "./platform/d1-meter";
import { ApiError, fieldErrorsFromZod, problemResponse, toApiError, validationError } from "./platform/errors";
import { allowedMethodsResolver } from "./platform/http/method-not-allowed";
import { limitBody, responseHeaders } from "./platform/http/middleware";

export function buildApp() {
  const app = new OpenAPIHono<AppEnv>({
    // Every validation failure, with every issue, in our problem format.
    defaultHook: (result) => {
      if (!result.success) throw validationError(fieldErrorsFromZod(result.error.issues));
    },
  });

  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "A session token from sign-in or an API token (`lng_…`).",
  });

  app.use("*", responseHeaders);
  app.use("/api/*", d1Meter);
  app.use("/api/*", limitBody());

  registerSystem(app);
  registerAuth(app);
  registerTokens(app);
  registerContent(app);
  registerCatalog(app);
  registerProgress(app);
  registerWebhooks(app);
  registerEvents(app);
  registerExports(app);

  const allowedMethods = allowedMethodsResolver(app);
  app.notFound((c) => {
    const allowed = allowedMethods(c.req.path);
    if (allowed.length > 0) {
      return problemResponse(
        c,
        new ApiError("method_not_allowed", `${c.req.method} is not allowed here; use ${allowed.join(", ")}.`, { headers: { Allow: allowed.join(", ") } }),
      );
    }
    return problemResponse(c, new ApiError("not_found", `No route for ${c.req.method} ${c.req.path}.`));
  });

  app.onError((err, c) => {
    const error = toApiError(err);
    if (error.status >= 500) {
      console.error(JSON.stringify({ level: "error", request_id: c.get("requestId"), path: c.req.path, error: err instanceof Error ? err.stack : String(err) }));
    }
    return problemResponse(c, error);
  });

  return app;
}
