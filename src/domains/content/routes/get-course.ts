import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { seesDrafts } from "../policy";
import { COURSES } from "../prefixes";
import { presentCourseDetails } from "../present";
import { CourseDetailsSchema, CourseIdParam } from "../schemas";
import { getCourse } from "../service";

export const getCourseRoute = tokenRoute("content:read", {
  method: "get",
  path: `${COURSES}/{id}`,
  tags: ["Content"],
  operationId: "getCourse",
  summary: "Course details with the lesson outline",
  description:
    "The course and every lesson in order. An unknown id, or an unpublished course for anybody but platform staff: 404.",
  request: { params: CourseIdParam },
  responses: { 200: jsonResponse(CourseDetailsSchema, "The course.") },
});

export function registerGetCourse(app: OpenAPIHono<AppEnv>) {
  app.openapi(getCourseRoute, async (c) => {
    const ctx = principalContext(c);
    const { course, outline } = await getCourse(ctx, {
      id: c.req.valid("param").id,
      includeDrafts: seesDrafts(ctx.principal),
    });
    return c.json(presentCourseDetails(course, outline), 200);
  });
}
