import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { COURSES } from "../prefixes";
import { presentCourseDetails } from "../present";
import { CourseDetailsSchema, CourseIdParam } from "../schemas";
import { getCourse, seesDrafts } from "../service";

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
    const { course, outline } = await getCourse(c.env, c.req.valid("param").id, seesDrafts(c.var.principal));
    return c.json(presentCourseDetails(course, outline), 200);
  });
}
