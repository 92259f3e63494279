import type { OpenAPIHono } from "@hono/zod-openapi";
import { cors } from "hono/cors";
import type { AppEnv } from "../../env";
import { BOOKMARK_HEADER, staleReadsTolerated } from "../../platform/http/context-middleware";
import { PUBLIC_COURSES_PATH } from "../content/public-pages";
import { PUBLIC_EXPOSED_HEADERS } from "./headers";
import { registerGetPublicCourse } from "./routes/get-public-course";
import { registerListPublicCourses } from "./routes/list-public-courses";

/**
 * CORS for the public catalogue: readable from any origin (no credentials are involved), errors
 * included; preflights answered here (204, cached for a day). `ETag`, `Age`, `Retry-After`,
 * `X-Request-Id`, `X-Cache` and `X-D1-Bookmark` are exposed to scripts. (Errors are `no-store` like every problem, so
 * no cache keeps the 404 of a course about to be published.)
 */
const publicCors = cors({
  origin: "*",
  allowMethods: ["GET", "HEAD"],
  allowHeaders: ["If-None-Match", BOOKMARK_HEADER],
  exposeHeaders: [...PUBLIC_EXPOSED_HEADERS],
  maxAge: 86_400,
});

/**
 * The public catalogue: published courses without a token, served for the edge; its reads tolerate a
 * replica's lag (they are cached for a minute anyway), so they start at the nearest replica.
 */
export function registerCatalog(app: OpenAPIHono<AppEnv>) {
  app.use(PUBLIC_COURSES_PATH, publicCors, staleReadsTolerated);
  app.use(`${PUBLIC_COURSES_PATH}/*`, publicCors, staleReadsTolerated);
  registerListPublicCourses(app);
  registerGetPublicCourse(app);
}
