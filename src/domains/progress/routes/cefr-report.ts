import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { enforce } from "../../../platform/auth/policy";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { resolveLearner } from "../learner";
import { mayActFor } from "../policy";
import { CEFR } from "../prefixes";
import { presentCefrReport } from "../reports/present";
import { CEFR_METHOD, CefrReportSchema, LearnerQuery } from "../reports/schemas";
import { readSkillEvidence } from "../reports/service";

export const cefrReportRoute = tokenRoute("progress:read", {
  method: "get",
  path: `${CEFR}/report`,
  tags: ["Progress"],
  operationId: "getCefrReport",
  summary: "CEFR level per skill",
  description: `The learner's CEFR level in each skill and overall, the progress towards the next level and the evidence behind it (attempts per item level). ${CEFR_METHOD.description} The response repeats this method in \`method\`.`,
  request: { query: LearnerQuery },
  responses: { 200: jsonResponse(CefrReportSchema, "The report.") },
});

export function registerCefrReport(app: OpenAPIHono<AppEnv>) {
  app.openapi(cefrReportRoute, async (c) => {
    const ctx = principalContext(c);
    const { user_id: userId } = c.req.valid("query");
    enforce(mayActFor(ctx.principal, { userId, purpose: "read" }));
    const learner = await resolveLearner(ctx, userId);
    const rows = await readSkillEvidence(ctx, learner.id);
    return c.json(presentCefrReport(learner.id, rows), 200);
  });
}
