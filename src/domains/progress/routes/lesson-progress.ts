import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { paginate } from "../../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { COURSES } from "../../content/prefixes";
import { seesDrafts } from "../../content/service";
import { resolveLearner } from "../learner";
import { presentLessonProgress } from "../reports/present";
import { CourseParam, LessonProgressPageSchema, LessonProgressQuery } from "../reports/schemas";
import { readLessonProgress } from "../reports/service";

export const lessonProgressRoute = tokenRoute("progress:read", {
  method: "get",
  path: `${COURSES}/{course}/lesson-progress`,
  tags: ["Progress"],
  operationId: "listLessonProgress",
  summary: "Progress in each lesson of a course",
  description:
    "One entry per lesson of the course, ordered by position, whether or not the learner has started it: items done of the total, percent, status (`not_started`, `in_progress`, `completed`), when it was started and completed, and the score (mean best score of the passed items). An unknown course, or an unpublished one for anybody but platform staff: 404.",
  request: { params: CourseParam, query: LessonProgressQuery },
  responses: {
    200: jsonResponse(LessonProgressPageSchema, "A page of lessons with the learner's progress."),
  },
});

export function registerLessonProgress(app: OpenAPIHono<AppEnv>) {
  app.openapi(lessonProgressRoute, async (c) => {
    const { page, per_page, user_id } = c.req.valid("query");
    const learner = await resolveLearner(c.env, c.var.principal, user_id, "read");
    const { total, rows } = await readLessonProgress(
      c.env,
      learner.id,
      c.req.valid("param").course,
      { page, per_page },
      seesDrafts(c.var.principal),
    );
    return c.json(paginate(c, { page, per_page }, total, rows.map(presentLessonProgress)), 200);
  });
}
