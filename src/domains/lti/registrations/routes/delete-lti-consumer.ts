import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { tokenRoute } from "../../../../platform/openapi";
import { LTI_CONSUMERS } from "../../prefixes";
import { IdParam } from "../../schemas";
import { deleteConsumer } from "../service";

export const deleteLtiConsumerRoute = tokenRoute("lti:write", {
  method: "delete",
  path: `${LTI_CONSUMERS}/{id}`,
  tags: ["LTI"],
  operationId: "deleteLtiConsumer",
  summary: "Delete an LTI 1.3 platform registration",
  description:
    "The platform can no longer launch Lingua nor receive grades. Users it created stay members of the institution; the launch log is kept.",
  request: { params: IdParam },
  responses: { 204: { description: "Deleted." } },
});

export function registerDeleteLtiConsumer(app: OpenAPIHono<AppEnv>) {
  app.openapi(deleteLtiConsumerRoute, async (c) => {
    await deleteConsumer(principalContext(c), c.req.valid("param").id);
    return c.body(null, 204);
  });
}
