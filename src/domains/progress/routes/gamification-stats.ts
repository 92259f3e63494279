import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { enforce } from "../../../platform/auth/policy";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { resolveLearner } from "../learner";
import { mayActFor } from "../policy";
import { GAMIFICATION } from "../prefixes";
import { presentGamification } from "../reports/gamification/present";
import { GamificationStatsSchema } from "../reports/gamification/schemas";
import { readGamification } from "../reports/gamification/service";
import { LearnerQuery } from "../reports/schemas";
import { localTime, weekOf } from "../rules";

export const gamificationStatsRoute = tokenRoute("progress:read", {
  method: "get",
  path: `${GAMIFICATION}/stats`,
  tags: ["Gamification"],
  operationId: "getGamificationStats",
  summary: "XP, streaks and achievements",
  description:
    "Total XP, XP of the current week (from Monday in the learner's time zone), the current streak (consecutive days with activity ending today or yesterday in the learner's time zone) and the longest, the achievements unlocked with when, and the locked ones with progress towards their target.",
  request: { query: LearnerQuery },
  responses: { 200: jsonResponse(GamificationStatsSchema, "The learner's gamification state.") },
});

export function registerGamificationStats(app: OpenAPIHono<AppEnv>) {
  app.openapi(gamificationStatsRoute, async (c) => {
    const ctx = principalContext(c);
    const { user_id: userId } = c.req.valid("query");
    enforce(mayActFor(ctx.principal, { userId, purpose: "read" }));
    const learner = await resolveLearner(ctx, userId);
    const today = localTime(ctx.now(), learner.timeZone).day;
    const week = weekOf(today);
    const data = await readGamification(ctx, { learnerId: learner.id, week });
    return c.json(presentGamification(learner.id, today, week, data), 200);
  });
}
