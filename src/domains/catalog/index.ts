import type { OpenAPIHono } from "@hono/zod-openapi";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../../env";
import { PUBLIC_COURSES_PATH } from "../content/public-pages";
import { PUBLIC_CORS_HEADERS } from "./headers";
import { registerGetPublicCourse } from "./routes/get-public-course";
import { registerListPublicCourses } from "./routes/list-public-courses";

/**
 * CORS for the public catalogue: readable from any origin (no credentials are involved), errors
 * included; answers preflights itself. `ETag` and `Retry-After` are exposed to scripts. (Errors are
 * `no-store` like every problem, so no cache keeps the 404 of a course about to be published.)
 */
const publicEdgeHeaders = createMiddleware<AppEnv>(async function publicEdgeHeaders(c, next) {
  if (c.req.method === "OPTIONS") {
    return new Response(null, {
      status: 204,
      headers: {
        "Access-Control-Allow-Origin": "*",
        "Access-Control-Allow-Methods": "GET, HEAD, OPTIONS",
        "Access-Control-Allow-Headers": "If-None-Match",
        "Access-Control-Max-Age": "86400",
      },
    });
  }
  await next();
  for (const [name, value] of PUBLIC_CORS_HEADERS) c.res.headers.set(name, value);
});

/** The public catalogue: published courses without a token, served for the edge. */
export function registerCatalog(app: OpenAPIHono<AppEnv>) {
  app.use(PUBLIC_COURSES_PATH, publicEdgeHeaders);
  app.use(`${PUBLIC_COURSES_PATH}/*`, publicEdgeHeaders);
  registerListPublicCourses(app);
  registerGetPublicCourse(app);
}
