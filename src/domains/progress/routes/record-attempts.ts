import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { enforce } from "../../../platform/auth/policy";
import { ApiError } from "../../../platform/errors";
import { principalContext } from "../../../platform/http/context-middleware";
import { idempotencyHeaderShape, idempotent } from "../../../platform/http/idempotency";
import { jsonBody, jsonResponse, tokenRoute } from "../../../platform/openapi";
import { errorResponses } from "../../../platform/openapi-problems";
import { observeBookmark } from "../../../platform/service/context";
import { resolveLearner } from "../learner";
import { mayActFor } from "../policy";
import { PROGRESS } from "../prefixes";
import { RecordAttemptsBody, RecordAttemptsResponse } from "../recording/schemas";
import type { AttemptInput } from "../recording/types";

export const recordAttemptsRoute = tokenRoute("progress:write", {
  method: "post",
  path: `${PROGRESS}/attempts`,
  tags: ["Progress"],
  operationId: "recordAttempts",
  summary: "Record training-item attempts",
  description:
    "Records one attempt or a batch of up to 100 and answers what each changed: XP, item and lesson status, course completion, achievements. Attempt ids are your UUIDs: a resent id is reported as `duplicate` and counts once — even when its other fields differ, the first recording wins and the resent values are ignored; an id already recorded for another learner is `409 conflict`. Items must belong to published courses; `occurred_at` may not be in the future (5 minutes of clock skew are accepted and recorded as now). With an `Idempotency-Key`, a retry replays the first response exactly (what each attempt changed then), instead of reporting the attempts as duplicates. Emits `lesson.completed`, `course.completed`, `achievement.unlocked`, `cefr.level_changed` and `streak.milestone` events.",
  middleware: [idempotent],
  request: { headers: z.object(idempotencyHeaderShape), body: jsonBody(RecordAttemptsBody) },
  responses: {
    200: jsonResponse(RecordAttemptsResponse, "What the attempts changed."),
    409: {
      ...errorResponses[409],
      description:
        "An attempt id was already recorded for another learner (`conflict`; nothing of the batch is recorded), or a request with this Idempotency-Key is still in flight (`idempotency_in_flight`).",
    },
  },
});

export function registerRecordAttempts(app: OpenAPIHono<AppEnv>) {
  app.openapi(recordAttemptsRoute, async (c) => {
    const body = c.req.valid("json");
    const { user_id: userId, ...rest } = body as typeof body & { user_id?: string };
    const attempts: AttemptInput[] =
      "attempts" in rest ? (rest.attempts as AttemptInput[]) : [rest as AttemptInput];
    const ctx = principalContext(c);
    enforce(mayActFor(ctx.principal, { userId, purpose: "write" }));
    const learner = await resolveLearner(ctx, userId, { write: true });
    const recorders = ctx.env.PROGRESS_RECORDER;
    // The recorder commits the batch and its events, and publishes them (recording/service.ts).
    const result = await recorders
      .get(recorders.idFromName(learner.id))
      .record({ learner, attempts, requestId: ctx.requestId, database: ctx.database });
    // The recorder wrote in its own D1 session: this request's bookmark carries on from it.
    observeBookmark(ctx, result.bookmark);
    if (!result.ok) {
      // A single attempt's fields are reported at the top level, as it was sent.
      const errors =
        "attempts" in rest
          ? result.errors
          : result.errors?.map((e) => ({ ...e, path: e.path.replace(/^attempts\.0\./, "") }));
      throw new ApiError(result.code, result.detail, { errors });
    }
    return c.json({ data: result.outcomes, summary: result.summary }, 200);
  });
}
