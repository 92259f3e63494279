import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { LTI_CONSUMERS } from "../../prefixes";
import { IdParam } from "../../schemas";
import { presentConsumer } from "../present";
import { ConsumerSchema } from "../schemas";
import { findConsumer } from "../service";

export const getLtiConsumerRoute = tokenRoute("lti:read", {
  method: "get",
  path: `${LTI_CONSUMERS}/{id}`,
  tags: ["LTI"],
  operationId: "getLtiConsumer",
  summary: "Get an LTI 1.3 platform registration",
  request: { params: IdParam },
  responses: { 200: jsonResponse(ConsumerSchema, "The registration.") },
});

export function registerGetLtiConsumer(app: OpenAPIHono<AppEnv>) {
  app.openapi(getLtiConsumerRoute, async (c) => {
    const row = await findConsumer(principalContext(c), c.req.valid("param").id);
    return c.json(presentConsumer(row, new URL(c.req.url).origin), 200);
  });
}
