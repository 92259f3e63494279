import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { INSTITUTIONS } from "../../prefixes";
import { AnalyticsParams, AnalyticsQuery, AnalyticsSchema } from "../schemas";
import { readAnalytics } from "../service";

const cacheHeaders = {
  ETag: {
    description:
      "Weak validator of the figures: it changes whenever any figure of the answer could (activity recorded for a day of the range, late or not; members, groups or CEFR levels; the institution's name or branding; the range itself). Send it back in `If-None-Match` for a `304`.",
    schema: { type: "string" as const },
  },
  "Cache-Control": {
    description:
      "`private, max-age=60` when the range includes today (or later), `private, no-cache` when it ended before today (revalidate; a `304` costs a few rows).",
    schema: { type: "string" as const },
  },
};

export const getAnalyticsRoute = tokenRoute("analytics:read", {
  method: "get",
  path: `${INSTITUTIONS}/{id}/analytics`,
  tags: ["Institutions"],
  operationId: "getInstitutionAnalytics",
  summary: "White-label analytics dashboard data",
  description:
    "What a branded dashboard shows for a date range: the institution and its branding, totals (members, active learners, minutes, attempts, lessons and courses completed, XP), a zero-filled series by day, week or month, the learners' current CEFR levels overall and per skill, the top courses by active learners with their completions, and the same totals per group. `group` restricts every figure to that group's members. Days are the learners' local calendar days; the default range is the last 30 days up to today in the institution's time zone, at most 366 days. Figures are kept current with every recording (no delay); `generated_at` says when they were read. Every answer carries an `ETag` (`If-None-Match` with it answers `304` while no figure could have changed) and `Cache-Control` (`private, max-age=60` for a range that includes today, `private, no-cache` for one that ended before). Another institution's id: 404.",
  request: { params: AnalyticsParams, query: AnalyticsQuery },
  responses: {
    200: { ...jsonResponse(AnalyticsSchema, "The analytics."), headers: cacheHeaders },
    304: { description: "Not modified: `If-None-Match` holds the current `ETag`.", headers: cacheHeaders },
  },
});

export function registerGetAnalytics(app: OpenAPIHono<AppEnv>) {
  app.openapi(getAnalyticsRoute, async (c) => {
    const answer = await readAnalytics(principalContext(c), {
      institutionId: c.req.valid("param").id,
      query: c.req.valid("query"),
      ifNoneMatch: c.req.header("If-None-Match"),
    });
    c.header("ETag", answer.etag);
    c.header("Cache-Control", answer.cacheControl);
    c.header("Vary", "Authorization", { append: true });
    if (answer.status === 304) return c.body(null, 304);
    return c.json(answer.body, 200);
  });
}
