import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { paginate } from "../../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { seesDrafts } from "../policy";
import { TRAININGS } from "../prefixes";
import { presentTraining } from "../present";
import { ListTrainingsQuery, TrainingPageSchema } from "../schemas";
import { listTrainings } from "../service";

export const listTrainingsRoute = tokenRoute("content:read", {
  method: "get",
  path: TRAININGS,
  tags: ["Content"],
  operationId: "listTrainings",
  summary: "List training blocks",
  description:
    "Ordered by lesson id, then position. Blocks of unpublished courses are visible to platform staff only.",
  request: { query: ListTrainingsQuery },
  responses: { 200: jsonResponse(TrainingPageSchema, "A page of training blocks.") },
});

export function registerListTrainings(app: OpenAPIHono<AppEnv>) {
  app.openapi(listTrainingsRoute, async (c) => {
    const { page, per_page, lesson } = c.req.valid("query");
    const ctx = principalContext(c);
    const { total, rows } = await listTrainings(ctx, {
      filters: { lesson },
      page: { page, per_page },
      includeDrafts: seesDrafts(ctx.principal),
    });
    return c.json(paginate(c, { page, per_page }, total, rows.map(presentTraining)), 200);
  });
}
