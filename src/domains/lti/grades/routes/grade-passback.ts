import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { requireInstitution } from "../../../../platform/auth/principal";
import { ApiError } from "../../../../platform/errors";
import { principalContext } from "../../../../platform/http/context-middleware";
import { idempotencyHeaderShape, idempotent } from "../../../../platform/http/idempotency";
import { jsonBody, jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { errorResponses } from "../../../../platform/openapi-problems";
import { LTI } from "../../prefixes";
import { LaunchParam } from "../../schemas";
import { PassbackBody, PassbackSchema } from "../passback-schemas";
import { gradeLaunch, presentPassback } from "../passbacks";

/** POST /api/lti/grade-passback/{launch}: a score for a launch's learner, sent at once. */
export const gradePassbackRoute = tokenRoute("lti:grade", {
  method: "post",
  path: `${LTI}/grade-passback/{launch}`,
  tags: ["LTI"],
  operationId: "ltiGradePassback",
  summary: "Send a grade back to the learning platform",
  description:
    "Sends a score for the launch's learner to the platform's line item (LTI Assignment and Grade Services 2.0): an access token by the client-credentials grant with a JWT client assertion signed by the registration's own key, published at its `tool.jwks_url` (the token, cached until shortly before it expires), then `application/vnd.ims.lis.v1.score+json` `{ userId, scoreGiven, scoreMaximum, activityProgress, gradingProgress, timestamp, comment }` to the line item's `/scores`. `200`: the platform accepted it. `202`: the platform failed or timed out; retried through a queue with backoff (at most 3 times), visible in `GET /api/integrations/lti-launches/{launch}`. `502 lti_platform_rejected`: the platform answered 4xx (`platform_status`, `platform_body`: its first KiB). `409 lti_not_gradable`: the launch has no line item or lacks the score scope. Another institution's launch: 404. With an `Idempotency-Key`, a retried request replays the first answer instead of sending the score again.",
  middleware: [idempotent],
  request: { params: LaunchParam, headers: z.object(idempotencyHeaderShape), body: jsonBody(PassbackBody) },
  responses: {
    200: jsonResponse(PassbackSchema, "Accepted by the platform."),
    202: jsonResponse(PassbackSchema, "The platform failed; retrying."),
    409: errorResponses[409],
    502: {
      ...errorResponses[409],
      description: "`lti_platform_rejected`: the platform refused the score or the token.",
    },
  },
});

export function registerGradePassback(app: OpenAPIHono<AppEnv>) {
  app.openapi(gradePassbackRoute, async (c) => {
    const ctx = principalContext(c);
    const { row, result } = await gradeLaunch(ctx, {
      institutionId: requireInstitution(ctx.principal).id,
      launchId: c.req.valid("param").launch,
      score: c.req.valid("json"),
    });
    if (result.status === "failed")
      throw new ApiError(
        "lti_platform_rejected",
        `The platform refused the score: ${result.outcome.error ?? "no answer"}.`,
        {
          extensions: {
            passback_id: row.id,
            platform_status: result.outcome.responseStatus,
            platform_body: result.outcome.responseBody?.slice(0, 1024) ?? null,
          },
        },
      );
    return c.json(presentPassback(row), result.status === "succeeded" ? 200 : 202);
  });
}
