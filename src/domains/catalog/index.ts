import type { OpenAPIHono } from "@hono/zod-openapi";
import { cors } from "hono/cors";
import type { AppEnv } from "../../env";
import { PUBLIC_COURSES_PATH } from "../content/public-pages";
import { PUBLIC_EXPOSED_HEADERS } from "./headers";
import { registerGetPublicCourse } from "./routes/get-public-course";
import { registerListPublicCourses } from "./routes/list-public-courses";

/**
 * CORS for the public catalogue: readable from any origin (no credentials are involved), errors
 * included; preflights answered here (204, cached for a day). `ETag`, `Age`, `Retry-After`,
 * `X-Request-Id` and `X-Cache` are exposed to scripts. (Errors are `no-store` like every problem, so
 * no cache keeps the 404 of a course about to be published.)
 */
const publicCors = cors({
  origin: "*",
  allowMethods: ["GET", "HEAD"],
  allowHeaders: ["If-None-Match"],
  exposeHeaders: [...PUBLIC_EXPOSED_HEADERS],
  maxAge: 86_400,
});

/** The public catalogue: published courses without a token, served for the edge. */
export function registerCatalog(app: OpenAPIHono<AppEnv>) {
  app.use(PUBLIC_COURSES_PATH, publicCors);
  app.use(`${PUBLIC_COURSES_PATH}/*`, publicCors);
  registerListPublicCourses(app);
  registerGetPublicCourse(app);
}
