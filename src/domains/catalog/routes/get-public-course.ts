import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { serveFromEdgeCache } from "../../../platform/http/edge-cache";
import { jsonResponse, publicRoute } from "../../../platform/openapi";
import { limitByIpAtEdge } from "../../../platform/ratelimit/edge-ip-limit";
import { presentCourseDetails } from "../../content/present";
import { publicCourseKey } from "../../content/public-pages";
import { CourseDetailsSchema, CourseSlugParam } from "../../content/schemas";
import { getPublishedCourseBySlug } from "../../content/service";
import { PUBLIC } from "../prefixes";
import { cacheableResponses } from "../responses";

export const getPublicCourseRoute = publicRoute({
  method: "get",
  path: `${PUBLIC}/courses/{slug}`,
  tags: ["Catalog"],
  operationId: "getPublicCourse",
  summary: "A published course by slug (no token)",
  description:
    "The course and its lesson outline. An unknown slug or an unpublished course: 404. Cacheable like the list.",
  middleware: [limitByIpAtEdge("PUBLIC_RATE_LIMITER")],
  request: { params: CourseSlugParam },
  responses: cacheableResponses(jsonResponse(CourseDetailsSchema, "The course.")),
});

export function registerGetPublicCourse(app: OpenAPIHono<AppEnv>) {
  app.openapi(getPublicCourseRoute, async (c) => {
    const { slug } = c.req.valid("param");
    return serveFromEdgeCache(c, publicCourseKey(new URL(c.req.url).origin, slug), async () => {
      const { course, outline } = await getPublishedCourseBySlug(c.get("ctx"), slug);
      return presentCourseDetails(course, outline);
    });
  });
}
