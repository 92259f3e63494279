import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { paginate } from "../../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { seesDrafts } from "../policy";
import { COURSES } from "../prefixes";
import { presentCourse } from "../present";
import { CoursePageSchema, ListCoursesQuery } from "../schemas";
import { listCourses } from "../service";

export const listCoursesRoute = tokenRoute("content:read", {
  method: "get",
  path: COURSES,
  tags: ["Content"],
  operationId: "listCourses",
  summary: "List courses",
  description:
    "Every filter is validated (an invalid value is 422 naming the field). Default order `title` (case-insensitive), ties by id. Unpublished courses are visible to platform staff (a token with `content:write`) only; for everybody else they do not exist and `published=false` is an empty list.",
  request: { query: ListCoursesQuery },
  responses: { 200: jsonResponse(CoursePageSchema, "A page of courses.") },
});

export function registerListCourses(app: OpenAPIHono<AppEnv>) {
  app.openapi(listCoursesRoute, async (c) => {
    const { page, per_page, published, ...filters } = c.req.valid("query");
    const ctx = principalContext(c);
    const { total, rows } = await listCourses(ctx, {
      filters: { ...filters, published: published === undefined ? undefined : published === "true" },
      page: { page, per_page },
      includeDrafts: seesDrafts(ctx.principal),
    });
    return c.json(paginate(c, { page, per_page }, total, rows.map(presentCourse)), 200);
  });
}
