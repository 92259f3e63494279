import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { enforce } from "../../../platform/auth/policy";
import { ApiError, validationError } from "../../../platform/errors";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { resolveLearner } from "../learner";
import { defaultLeaderboardScope, mayActFor, seesEveryLeaderboardName } from "../policy";
import { GAMIFICATION } from "../prefixes";
import { readPlatformLeaderboard } from "../reports/gamification/platform-leaderboard";
import { presentLeaderboard } from "../reports/gamification/present";
import { ANONYMOUS_NAME, LeaderboardQuery, LeaderboardSchema } from "../reports/gamification/schemas";
import { readLeaderboard } from "../reports/gamification/service";
import { localTime, weekOf } from "../rules";

export const leaderboardRoute = tokenRoute("progress:read", {
  method: "get",
  path: `${GAMIFICATION}/leaderboard`,
  tags: ["Gamification"],
  operationId: "getLeaderboard",
  summary: "XP leaderboard",
  description: `The top learners by XP of the current week or of all time, in your institution or on the whole platform (every database of the deployment, merged: exact ranks and top), most XP first (ties by user id), and your own entry with your rank (1 + the number of learners in the scope with more XP). Learners who opted out of leaderboards, and on the platform scope learners of other institutions, appear as "${ANONYMOUS_NAME}" without a user id. With \`user_id\`, "you" is that member.`,
  request: { query: LeaderboardQuery },
  responses: { 200: jsonResponse(LeaderboardSchema, "The leaderboard.") },
});

export function registerLeaderboard(app: OpenAPIHono<AppEnv>) {
  app.openapi(leaderboardRoute, async (c) => {
    const { period, scope: asked, limit, user_id } = c.req.valid("query");
    const ctx = principalContext(c);
    const { principal } = ctx;
    enforce(mayActFor(principal, { userId: user_id, purpose: "read" }));
    const learner = await resolveLearner(ctx, user_id);
    const scope = asked ?? defaultLeaderboardScope(principal, learner);
    if (scope === "institution" && !learner.institutionId) {
      throw validationError([
        { path: "scope", message: "must be platform for a user without an institution" },
      ]);
    }
    const week = weekOf(localTime(ctx.now(), learner.timeZone).day);
    // An institution's board is in its database; the platform's spans every database.
    const data =
      scope === "institution"
        ? await readLeaderboard(ctx, {
            period,
            institutionId: learner.institutionId,
            week,
            subjectId: learner.id,
            limit,
          })
        : await readPlatformLeaderboard(ctx, { period, week, subjectId: learner.id, limit });
    if (!data.me) throw new ApiError("not_found", `No learner ${learner.id}.`);
    const viewer = {
      subjectId: learner.id,
      institutionId: principal.institution?.id ?? null,
      staff: seesEveryLeaderboardName(principal),
    };
    return c.json(
      presentLeaderboard({ period, scope, week, viewer, top: data.top, me: data.me, above: data.above }),
      200,
    );
  });
}
