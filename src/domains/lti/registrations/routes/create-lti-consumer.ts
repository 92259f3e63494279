import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { idempotencyHeaderShape, idempotent } from "../../../../platform/http/idempotency";
import { jsonBody, jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { errorResponses } from "../../../../platform/openapi-problems";
import { LTI_CONSUMERS } from "../../prefixes";
import { presentConsumer } from "../present";
import { ConsumerSchema, CreateConsumerBody } from "../schemas";
import { createConsumer } from "../service";

export const createLtiConsumerRoute = tokenRoute("lti:write", {
  method: "post",
  path: LTI_CONSUMERS,
  tags: ["LTI"],
  operationId: "createLtiConsumer",
  summary: "Register an LTI 1.3 platform",
  description:
    "Registers a learning platform (Canvas, Moodle, Blackboard, D2L, Schoology) by the values its LTI 1.3 tool configuration shows. The answer's `tool` holds the URLs to paste into the platform. `issuer` + `client_id` is unique within the institution (a second one is 409); another institution may register the same pair, and a login then goes to the registration whose `deployment_ids` hold the login's `lti_deployment_id` (every hosted Canvas shares one issuer: the client id and deployment id tell them apart). A login that more than one registration matches is refused (`registration_ambiguous`).",
  middleware: [idempotent],
  request: { headers: z.object(idempotencyHeaderShape), body: jsonBody(CreateConsumerBody) },
  responses: {
    201: jsonResponse(ConsumerSchema, "The registration."),
    409: {
      ...errorResponses[409],
      description:
        "`conflict`: the institution has a registration with this `issuer` and `client_id` already; or a request with this Idempotency-Key is still in flight.",
    },
  },
});

export function registerCreateLtiConsumer(app: OpenAPIHono<AppEnv>) {
  app.openapi(createLtiConsumerRoute, async (c) => {
    const row = await createConsumer(principalContext(c), c.req.valid("json"));
    c.header("Location", new URL(`${LTI_CONSUMERS}/${row.id}`, c.req.url).toString());
    return c.json(presentConsumer(row, new URL(c.req.url).origin), 201);
  });
}
