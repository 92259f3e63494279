import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { paginate } from "../../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { TRAININGS } from "../prefixes";
import { presentTraining } from "../present";
import { ListTrainingsQuery, TrainingPageSchema } from "../schemas";
import { listTrainings, seesDrafts } from "../service";

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
    const { total, rows } = await listTrainings(
      c.env,
      { lesson },
      { page, per_page },
      seesDrafts(c.var.principal),
    );
    return c.json(paginate(c, { page, per_page }, total, rows.map(presentTraining)), 200);
  });
}
