import type { Hono } from "hono";
import type { AppEnv } from "../../env";
import { ApiError, problemResponse, toApiError } from "../errors";
import { allowedMethodsResolver } from "./method-not-allowed";
import { limitBody, responseHeaders } from "./middleware";

/**
 * What every app of this worker does around its routes: response headers, the body
 * limit, 404 and 405 (with `Allow`) as problems, and every thrown error as a problem.
 */
export function applyApiConventions<A extends Hono<AppEnv>>(app: A, register: (app: A) => void): A {
  app.use("*", responseHeaders);
  // Only methods whose routes read a body; a GET's body is never read, so it needs no limit. A route
  // that takes more declares it (`acceptsBodyUpTo`); this reads the declarations from the app's routes.
  app.on(["POST", "PUT", "PATCH", "DELETE"], "/api/*", limitBody(app));

  register(app);

  const allowedMethods = allowedMethodsResolver(app);
  app.notFound((c) => {
    const allowed = allowedMethods(c.req.path);
    if (allowed.length > 0) {
      return problemResponse(
        c,
        new ApiError(
          "method_not_allowed",
          `${c.req.method} is not allowed here; use ${allowed.join(", ")}.`,
          { headers: { Allow: allowed.join(", ") } },
        ),
      );
    }
    return problemResponse(c, new ApiError("not_found", `No route for ${c.req.method} ${c.req.path}.`));
  });

  app.onError((err, c) => {
    const error = toApiError(err);
    if (err instanceof ApiError && error.status >= 500) {
      // An answer the product chose (a move's pause, a provider down): worth a line, not a stack.
      console.warn(
        JSON.stringify({
          level: "warn",
          request_id: c.get("requestId"),
          path: c.req.path,
          code: error.code,
          message: error.message,
        }),
      );
    } else if (error.status >= 500) {
      console.error(
        JSON.stringify({
          level: "error",
          request_id: c.get("requestId"),
          path: c.req.path,
          error: err instanceof Error ? err.stack : String(err),
        }),
      );
    }
    return problemResponse(c, error);
  });

  return app;
}
