import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { paginate } from "../../../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { errorResponses } from "../../../../platform/openapi-problems";
import { LTI_LAUNCHES } from "../../prefixes";
import { LaunchParam } from "../../schemas";
import { LineItemPageSchema, LineItemsQuery } from "../line-item-schemas";
import { listLineItems } from "../line-items";

/** GET /api/integrations/lti-launches/{launch}/line-items: the line items of the launch's context (AGS). */
export const listLtiLineItemsRoute = tokenRoute("lti:read", {
  method: "get",
  path: `${LTI_LAUNCHES}/{launch}/line-items`,
  tags: ["LTI"],
  operationId: "listLtiLineItems",
  summary: "List the line items (gradebook columns) of a launch's course in the LMS",
  description:
    "Reads the launch's `lineitems` URL (its Assignment and Grade Services claim) at once, with an access token for `https://purl.imsglobal.org/spec/lti-ags/scope/lineitem` (or `lineitem.readonly`) and `Accept: application/vnd.ims.lis.v2.lineitemcontainer+json`, following `Link: <…>; rel=\"next\"` pages on the same origin. `resource_id` and `tag` are passed to the platform. The list keeps the platform's order and is paged here with `page` / `per_page`. Each `id` is the line item's URL: a grade passback's `line_item_url`. `409 lti_line_items_unavailable`: the launch has no usable `lineitems` URL or no line-item scope. `502 lti_platform_rejected` / `bad_gateway`: the platform refused or failed. Another institution's launch: 404.",
  request: { params: LaunchParam, query: LineItemsQuery },
  responses: {
    200: jsonResponse(LineItemPageSchema, "A page of line items."),
    409: errorResponses[409],
    502: { ...errorResponses[409], description: "`lti_platform_rejected` or `bad_gateway`." },
  },
});

export function registerListLtiLineItems(app: OpenAPIHono<AppEnv>) {
  app.openapi(listLtiLineItemsRoute, async (c) => {
    const { page, per_page, resource_id, tag } = c.req.valid("query");
    const items = await listLineItems(principalContext(c), {
      launchId: c.req.valid("param").launch,
      resource_id,
      tag,
    });
    const start = (page - 1) * per_page;
    return c.json(paginate(c, { page, per_page }, items.length, items.slice(start, start + per_page)), 200);
  });
}
