import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { paginate } from "../../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { seesDrafts } from "../policy";
import { TRAINING_ITEMS } from "../prefixes";
import { presentTrainingItem } from "../present";
import { ListTrainingItemsQuery, TrainingItemPageSchema } from "../schemas";
import { listTrainingItems } from "../service";

export const listTrainingItemsRoute = tokenRoute("content:read", {
  method: "get",
  path: TRAINING_ITEMS,
  tags: ["Content"],
  operationId: "listTrainingItems",
  summary: "List training items",
  description:
    "Ordered by training block id, then position; each item includes its `content`. Items of unpublished courses are visible to platform staff only.",
  request: { query: ListTrainingItemsQuery },
  responses: { 200: jsonResponse(TrainingItemPageSchema, "A page of training items.") },
});

export function registerListTrainingItems(app: OpenAPIHono<AppEnv>) {
  app.openapi(listTrainingItemsRoute, async (c) => {
    const { page, per_page, ...filters } = c.req.valid("query");
    const ctx = principalContext(c);
    const { total, rows } = await listTrainingItems(ctx, {
      filters,
      page: { page, per_page },
      includeDrafts: seesDrafts(ctx.principal),
    });
    return c.json(paginate(c, { page, per_page }, total, rows.map(presentTrainingItem)), 200);
  });
}
