import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonBody, jsonResponse, tokenRoute } from "../../../platform/openapi";
import { COURSES } from "../prefixes";
import { presentCourseDetails } from "../present";
import { purgePublicCoursePages } from "../public-pages";
import { CourseDetailsSchema, CourseIdParam, UpdateCourseBody } from "../schemas";
import { updateCourse } from "../service";

export const updateCourseRoute = tokenRoute("content:write", {
  method: "patch",
  path: `${COURSES}/{id}`,
  tags: ["Content"],
  operationId: "updateCourse",
  summary: "Edit, publish or unpublish a course",
  description:
    "Platform staff only. Changes only the fields sent (unknown fields: 422). `published: true` publishes and sets `published_at` (kept if already published); `false` unpublishes and clears it. The public catalogue's cached copies of the course page and of the first unfiltered list pages are deleted in this location at once; other locations serve the change within 60 s.",
  request: { params: CourseIdParam, body: jsonBody(UpdateCourseBody) },
  responses: { 200: jsonResponse(CourseDetailsSchema, "The course as it now is.") },
});

export function registerUpdateCourse(app: OpenAPIHono<AppEnv>) {
  app.openapi(updateCourseRoute, async (c) => {
    const { course, outline } = await updateCourse(principalContext(c), {
      id: c.req.valid("param").id,
      changes: c.req.valid("json"),
    });
    await purgePublicCoursePages(c.req.url, course.slug);
    return c.json(presentCourseDetails(course, outline), 200);
  });
}
