import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { enforce } from "../../../platform/auth/policy";
import { addDays, daysBetween } from "../../../platform/dates";
import { validationError } from "../../../platform/errors";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { resolveLearner } from "../learner";
import { mayActFor } from "../policy";
import { PROGRESS_HISTORY } from "../prefixes";
import { presentHistory } from "../reports/present";
import {
  DEFAULT_HISTORY_DAYS,
  HistoryQuery,
  MAX_HISTORY_DAYS,
  ProgressHistorySchema,
} from "../reports/schemas";
import { readDailyActivity } from "../reports/service";
import { localTime } from "../rules";

export const progressHistoryRoute = tokenRoute("progress:read", {
  method: "get",
  path: PROGRESS_HISTORY,
  tags: ["Progress"],
  operationId: "getProgressHistory",
  summary: "Activity over time",
  description: `A dense series (every day or week of the range, zero-filled) of attempts, items completed, correct attempts, accuracy, XP and minutes, with totals. Days are the learner's calendar days in their time zone. Default range: the last ${DEFAULT_HISTORY_DAYS} days ending today; at most ${MAX_HISTORY_DAYS} days.`,
  request: { query: HistoryQuery },
  responses: { 200: jsonResponse(ProgressHistorySchema, "The series and its totals.") },
});

/** 422 unless from ≤ to and the range spans at most MAX_HISTORY_DAYS days (days compared as numbers). */
function checkRange(from: string, to: string): void {
  const days = daysBetween(from, to);
  if (days < 1) throw validationError([{ path: "from", message: `must not be after to (${to})` }]);
  if (days > MAX_HISTORY_DAYS)
    throw validationError([
      { path: "from", message: `the range may span at most ${MAX_HISTORY_DAYS} days (asked for ${days})` },
    ]);
}

export function registerProgressHistory(app: OpenAPIHono<AppEnv>) {
  app.openapi(progressHistoryRoute, async (c) => {
    const query = c.req.valid("query");
    // What can be checked without the learner's time zone is checked before looking the learner up.
    if (query.from && query.to) checkRange(query.from, query.to);
    const ctx = principalContext(c);
    enforce(mayActFor(ctx.principal, { userId: query.user_id, purpose: "read" }));
    const learner = await resolveLearner(ctx, query.user_id);
    const to = query.to ?? localTime(ctx.now(), learner.timeZone).day;
    const from = query.from ?? addDays(to, -(DEFAULT_HISTORY_DAYS - 1));
    checkRange(from, to);
    const rows = await readDailyActivity(ctx, { learnerId: learner.id, from, to });
    return c.json(
      presentHistory({
        userId: learner.id,
        timeZone: learner.timeZone,
        from,
        to,
        granularity: query.granularity,
        rows,
      }),
      200,
    );
  });
}
