import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { jsonBody, jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { errorResponses } from "../../../../platform/openapi-problems";
import { LTI_CONSUMERS } from "../../prefixes";
import { IdParam } from "../../schemas";
import { presentConsumer } from "../present";
import { ConsumerSchema, UpdateConsumerBody } from "../schemas";
import { updateConsumer } from "../service";

export const updateLtiConsumerRoute = tokenRoute("lti:write", {
  method: "put",
  path: `${LTI_CONSUMERS}/{id}`,
  tags: ["LTI"],
  operationId: "updateLtiConsumer",
  summary: "Update an LTI 1.3 platform registration",
  description:
    "Changes the fields sent; fields left out keep their value. An `issuer` and `client_id` another registration of the institution has is 409.",
  request: { params: IdParam, body: jsonBody(UpdateConsumerBody) },
  responses: {
    200: jsonResponse(ConsumerSchema, "The updated registration."),
    409: {
      ...errorResponses[409],
      description: "`conflict`: another registration of the institution has this `issuer` and `client_id`.",
    },
  },
});

export function registerUpdateLtiConsumer(app: OpenAPIHono<AppEnv>) {
  app.openapi(updateLtiConsumerRoute, async (c) => {
    const row = await updateConsumer(principalContext(c), {
      id: c.req.valid("param").id,
      body: c.req.valid("json"),
    });
    return c.json(presentConsumer(row, new URL(c.req.url).origin), 200);
  });
}
