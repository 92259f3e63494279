import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../../env";
import { normalisedUrl, serveFromEdgeCache } from "../../../platform/http/edge-cache";
import { paginate } from "../../../platform/http/pagination";
import { jsonResponse, publicRoute } from "../../../platform/openapi";
import { limitByIpAtEdge } from "../../../platform/ratelimit/edge-ip-limit";
import { presentCourse } from "../../content/present";
import { CoursePageSchema, ListPublicCoursesQuery, PUBLIC_COURSE_QUERY_PARAMS } from "../../content/schemas";
import { listCourses } from "../../content/service";
import { PUBLIC } from "../prefixes";
import { cacheableResponses } from "../responses";

export const listPublicCoursesRoute = publicRoute({
  method: "get",
  path: `${PUBLIC}/courses`,
  tags: ["Catalog"],
  operationId: "listPublicCourses",
  summary: "List published courses (no token)",
  description:
    "The public catalogue: published courses only, with the filters and sorts of `GET /api/courses` except `published`. Cacheable (`ETag`, `304` on `If-None-Match`); a repeat request is answered from the edge cache. Limited per client IP.",
  middleware: [limitByIpAtEdge("PUBLIC_RATE_LIMITER")],
  request: { query: ListPublicCoursesQuery },
  responses: cacheableResponses(jsonResponse(CoursePageSchema, "A page of published courses.")),
});

export function registerListPublicCourses(app: OpenAPIHono<AppEnv>) {
  app.openapi(listPublicCoursesRoute, async (c) => {
    const { page, per_page, ...filters } = c.req.valid("query");
    // One key per equivalent request; the links are built from it too, so its body is always the same.
    const key = normalisedUrl(c.req.url, PUBLIC_COURSE_QUERY_PARAMS);
    return serveFromEdgeCache(c, key, async () => {
      const { total, rows } = await listCourses(c.get("ctx"), {
        filters,
        page: { page, per_page },
        includeDrafts: false,
      });
      return paginate({ req: { url: key } } as Context, { page, per_page }, total, rows.map(presentCourse));
    });
  });
}
