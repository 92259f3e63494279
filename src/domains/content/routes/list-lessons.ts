import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { paginate } from "../../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { seesDrafts } from "../policy";
import { LESSONS } from "../prefixes";
import { presentLesson } from "../present";
import { LessonPageSchema, ListLessonsQuery } from "../schemas";
import { listLessons } from "../service";

export const listLessonsRoute = tokenRoute("content:read", {
  method: "get",
  path: LESSONS,
  tags: ["Content"],
  operationId: "listLessons",
  summary: "List lessons",
  description:
    "Ordered by course id, then position. Lessons of unpublished courses are visible to platform staff only.",
  request: { query: ListLessonsQuery },
  responses: { 200: jsonResponse(LessonPageSchema, "A page of lessons.") },
});

export function registerListLessons(app: OpenAPIHono<AppEnv>) {
  app.openapi(listLessonsRoute, async (c) => {
    const { page, per_page, course } = c.req.valid("query");
    const ctx = principalContext(c);
    const { total, rows } = await listLessons(ctx, {
      filters: { course },
      page: { page, per_page },
      includeDrafts: seesDrafts(ctx.principal),
    });
    return c.json(paginate(c, { page, per_page }, total, rows.map(presentLesson)), 200);
  });
}
