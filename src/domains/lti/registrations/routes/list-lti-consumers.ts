import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { PageQuery, paginate } from "../../../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { LTI_CONSUMERS } from "../../prefixes";
import { presentConsumer } from "../present";
import { ConsumerPageSchema } from "../schemas";
import { listConsumers } from "../service";

export const listLtiConsumersRoute = tokenRoute("lti:read", {
  method: "get",
  path: LTI_CONSUMERS,
  tags: ["LTI"],
  operationId: "listLtiConsumers",
  summary: "List LTI 1.3 platform registrations",
  description: "The institution's registered learning platforms, newest first (ties by id).",
  request: { query: PageQuery },
  responses: { 200: jsonResponse(ConsumerPageSchema, "A page of registrations.") },
});

export function registerListLtiConsumers(app: OpenAPIHono<AppEnv>) {
  app.openapi(listLtiConsumersRoute, async (c) => {
    const { page, per_page } = c.req.valid("query");
    const origin = new URL(c.req.url).origin;
    const { rows, total } = await listConsumers(principalContext(c), { page, per_page });
    return c.json(
      paginate(
        c,
        { page, per_page },
        total,
        rows.map((r) => presentConsumer(r, origin)),
      ),
      200,
    );
  });
}
