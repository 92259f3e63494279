import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { enforce } from "../../../platform/auth/policy";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { resolveLearner } from "../learner";
import { mayActFor } from "../policy";
import { LEARNING_INSIGHTS } from "../prefixes";
import { presentInsights, trendStart } from "../reports/insights/present";
import {
  INSIGHT_MIN_ATTEMPTS,
  LearningInsightsSchema,
  MAX_RECOMMENDATIONS,
  TREND_THRESHOLD,
  TREND_WEEKS,
} from "../reports/insights/schemas";
import { readInsights } from "../reports/insights/service";
import { LearnerQuery } from "../reports/schemas";
import { localTime } from "../rules";

export const learningInsightsRoute = tokenRoute("progress:read", {
  method: "get",
  path: LEARNING_INSIGHTS,
  tags: ["Progress"],
  operationId: "getLearningInsights",
  summary: "Strengths, trend, study habits and what to do next",
  description: [
    `- **Skills**: mean score per skill over every attempt, for skills with at least ${INSIGHT_MIN_ATTEMPTS} attempts; the strongest and the weakest.`,
    `- **Accuracy trend**: share of correct attempts in each of the last ${TREND_WEEKS} weeks (Monday to Sunday, learner's time zone) and a least-squares slope: \`improving\` at +${TREND_THRESHOLD} a week or more, \`declining\` at −${TREND_THRESHOLD} or less, otherwise \`steady\`.`,
    "- **Study time**: minutes by weekday and by hour of the learner's local time.",
    `- **Recommendations** (up to ${MAX_RECOMMENDATIONS}): for courses started and not completed, most recently active first, the first lesson not yet completed; if there are none, the first lesson of published courses not yet started whose CEFR range covers the learner's overall level (A1 before any level is assessed).`,
  ].join("\n"),
  request: { query: LearnerQuery },
  responses: { 200: jsonResponse(LearningInsightsSchema, "The insights.") },
});

export function registerLearningInsights(app: OpenAPIHono<AppEnv>) {
  app.openapi(learningInsightsRoute, async (c) => {
    const ctx = principalContext(c);
    const { user_id: userId } = c.req.valid("query");
    enforce(mayActFor(ctx.principal, { userId, purpose: "read" }));
    const learner = await resolveLearner(ctx, userId);
    const today = localTime(ctx.now(), learner.timeZone).day;
    const data = await readInsights(ctx, { learnerId: learner.id, trendFrom: trendStart(today), today });
    return c.json(presentInsights(learner.id, today, data), 200);
  });
}
