import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { nowIso } from "../../../platform/ids";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { STATS } from "../prefixes";
import { presentPlatformStats } from "../reports/present";
import { PlatformStatsSchema } from "../reports/schemas";
import { readPlatformStats } from "../reports/service";

export const platformStatsRoute = tokenRoute("stats:read", {
  method: "get",
  path: STATS,
  tags: ["Statistics"],
  operationId: "getPlatformStats",
  summary: "Platform-wide statistics",
  description:
    "Published courses, their lessons and training items; learners active today, in the last 7 and in the last 30 days (by their last active day in their own time zone, against today in UTC); and all-time attempts and items, lessons and courses completed across the platform.",
  responses: { 200: jsonResponse(PlatformStatsSchema, "The totals.") },
});

export function registerPlatformStats(app: OpenAPIHono<AppEnv>) {
  app.openapi(platformStatsRoute, async (c) => {
    const ctx = principalContext(c);
    const now = ctx.now();
    const today = nowIso(now).slice(0, 10);
    const data = await readPlatformStats(ctx, today);
    return c.json(presentPlatformStats(today, nowIso(now), data), 200);
  });
}
