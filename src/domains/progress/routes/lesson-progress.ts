import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { enforce } from "../../../platform/auth/policy";
import { principalContext } from "../../../platform/http/context-middleware";
import { paginate } from "../../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { seesDrafts } from "../../content/policy";
import { COURSES } from "../../content/prefixes";
import { resolveLearner } from "../learner";
import { mayActFor } from "../policy";
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
    const ctx = principalContext(c);
    enforce(mayActFor(ctx.principal, { userId: user_id, purpose: "read" }));
    const learner = await resolveLearner(ctx, user_id);
    const { total, rows } = await readLessonProgress(ctx, {
      learnerId: learner.id,
      courseId: c.req.valid("param").course,
      page: { page, per_page },
      includeDrafts: seesDrafts(ctx.principal),
    });
    return c.json(paginate(c, { page, per_page }, total, rows.map(presentLessonProgress)), 200);
  });
}
