import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { requireInstitution } from "../../../../platform/auth/principal";
import { idempotencyHeaderShape, idempotent } from "../../../../platform/http/idempotency";
import { PageQuery, paginate } from "../../../../platform/http/pagination";
import { jsonBody, jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { LTI_CONSUMERS } from "../../prefixes";
import {
  ConsumerPageSchema,
  ConsumerSchema,
  CreateConsumerBody,
  IdParam,
  UpdateConsumerBody,
} from "../../schemas";
import {
  createConsumer,
  deleteConsumer,
  findConsumer,
  listConsumers,
  presentConsumer,
  updateConsumer,
} from "../service";

const TAGS = ["LTI"];
const PATH = LTI_CONSUMERS;

const listRoute = tokenRoute("lti:read", {
  method: "get",
  path: PATH,
  tags: TAGS,
  operationId: "listLtiConsumers",
  summary: "List LTI 1.3 platform registrations",
  description: "The institution's registered learning platforms, newest first (ties by id).",
  request: { query: PageQuery },
  responses: { 200: jsonResponse(ConsumerPageSchema, "A page of registrations.") },
});

const createRouteDef = tokenRoute("lti:write", {
  method: "post",
  path: PATH,
  tags: TAGS,
  operationId: "createLtiConsumer",
  summary: "Register an LTI 1.3 platform",
  description:
    "Registers a learning platform (Canvas, Moodle, Blackboard, D2L, Schoology) by the values its LTI 1.3 tool configuration shows. The answer's `tool` holds the URLs to paste into the platform. `issuer` + `client_id` is unique within the institution (a second one is 409); another institution may register the same pair, and a login then goes to the registration whose `deployment_ids` hold the login's `lti_deployment_id` (every hosted Canvas shares one issuer: the client id and deployment id tell them apart). A login that more than one registration matches is refused (`registration_ambiguous`).",
  middleware: [idempotent],
  request: { headers: z.object(idempotencyHeaderShape), body: jsonBody(CreateConsumerBody) },
  responses: { 201: jsonResponse(ConsumerSchema, "The registration.") },
});

const getRoute = tokenRoute("lti:read", {
  method: "get",
  path: `${PATH}/{id}`,
  tags: TAGS,
  operationId: "getLtiConsumer",
  summary: "Get an LTI 1.3 platform registration",
  request: { params: IdParam },
  responses: { 200: jsonResponse(ConsumerSchema, "The registration.") },
});

const updateRoute = tokenRoute("lti:write", {
  method: "put",
  path: `${PATH}/{id}`,
  tags: TAGS,
  operationId: "updateLtiConsumer",
  summary: "Update an LTI 1.3 platform registration",
  description: "Changes the fields sent; fields left out keep their value.",
  request: { params: IdParam, body: jsonBody(UpdateConsumerBody) },
  responses: { 200: jsonResponse(ConsumerSchema, "The updated registration.") },
});

const deleteRoute = tokenRoute("lti:write", {
  method: "delete",
  path: `${PATH}/{id}`,
  tags: TAGS,
  operationId: "deleteLtiConsumer",
  summary: "Delete an LTI 1.3 platform registration",
  description:
    "The platform can no longer launch Lingua nor receive grades. Users it created stay members of the institution; the launch log is kept.",
  request: { params: IdParam },
  responses: { 204: { description: "Deleted." } },
});

export function registerConsumerRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(listRoute, async (c) => {
    const { page, per_page } = c.req.valid("query");
    const origin = new URL(c.req.url).origin;
    const { rows, total } = await listConsumers(c.env, requireInstitution(c.var.principal).id, {
      page,
      per_page,
    });
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

  app.openapi(createRouteDef, async (c) => {
    const row = await createConsumer(c.env, requireInstitution(c.var.principal).id, c.req.valid("json"));
    c.header("Location", new URL(`${PATH}/${row.id}`, c.req.url).toString());
    return c.json(presentConsumer(row, new URL(c.req.url).origin), 201);
  });

  app.openapi(getRoute, async (c) => {
    const row = await findConsumer(c.env, requireInstitution(c.var.principal).id, c.req.valid("param").id);
    return c.json(presentConsumer(row, new URL(c.req.url).origin), 200);
  });

  app.openapi(updateRoute, async (c) => {
    const row = await updateConsumer(
      c.env,
      requireInstitution(c.var.principal).id,
      c.req.valid("param").id,
      c.req.valid("json"),
    );
    return c.json(presentConsumer(row, new URL(c.req.url).origin), 200);
  });

  app.openapi(deleteRoute, async (c) => {
    await deleteConsumer(c.env, requireInstitution(c.var.principal).id, c.req.valid("param").id);
    return c.body(null, 204);
  });
}
