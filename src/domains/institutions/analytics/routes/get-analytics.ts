import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { INSTITUTIONS } from "../../prefixes";
import { AnalyticsParams, AnalyticsQuery, AnalyticsSchema } from "../schemas";
import { readAnalytics } from "../service";

export const getAnalyticsRoute = tokenRoute("analytics:read", {
  method: "get",
  path: `${INSTITUTIONS}/{id}/analytics`,
  tags: ["Institutions"],
  operationId: "getInstitutionAnalytics",
  summary: "White-label analytics dashboard data",
  description:
    "What a branded dashboard shows for a date range: the institution and its branding, totals (members, active learners, minutes, attempts, lessons and courses completed, XP), a zero-filled series by day, week or month, the learners' current CEFR levels overall and per skill, the top courses by active learners with their completions, and the same totals per group. `group` restricts every figure to that group's members. Days are the learners' local calendar days; the default range is the last 30 days up to today in the institution's time zone, at most 366 days. Figures are kept current with every recording (no delay). Another institution's id: 404.",
  request: { params: AnalyticsParams, query: AnalyticsQuery },
  responses: { 200: jsonResponse(AnalyticsSchema, "The analytics.") },
});

export function registerGetAnalytics(app: OpenAPIHono<AppEnv>) {
  app.openapi(getAnalyticsRoute, async (c) => {
    const body = await readAnalytics(principalContext(c), {
      institutionId: c.req.valid("param").id,
      query: c.req.valid("query"),
    });
    return c.json(body, 200);
  });
}
