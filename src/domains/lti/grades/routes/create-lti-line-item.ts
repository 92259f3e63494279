import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { idempotencyHeaderShape, idempotent } from "../../../../platform/http/idempotency";
import { jsonBody, jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { errorResponses } from "../../../../platform/openapi-problems";
import { LTI_LAUNCHES } from "../../prefixes";
import { LaunchParam } from "../../schemas";
import { CreateLineItemBody, LineItemSchema } from "../line-item-schemas";
import { createLineItem } from "../line-items";

/** POST /api/integrations/lti-launches/{launch}/line-items: a new line item in the launch's context (AGS). */
export const createLtiLineItemRoute = tokenRoute("lti:write", {
  method: "post",
  path: `${LTI_LAUNCHES}/{launch}/line-items`,
  tags: ["LTI"],
  operationId: "createLtiLineItem",
  summary: "Create a line item (gradebook column) in a launch's course in the LMS",
  description:
    "POSTs `application/vnd.ims.lis.v2.lineitem+json` `{ label, scoreMaximum, resourceId, tag }` to the launch's `lineitems` URL with a token for `https://purl.imsglobal.org/spec/lti-ags/scope/lineitem`; `resourceId` is the course or lesson id (published; else `422`). `201` with the line item as the platform created it: its `id` (URL) is what a grade passback's `line_item_url` takes. `409 lti_line_items_unavailable`: the launch has no usable `lineitems` URL or was not granted the `lineitem` scope. `502 lti_platform_rejected` / `bad_gateway`: the platform refused or failed. With an `Idempotency-Key`, a retried request replays the first answer instead of creating a second column.",
  middleware: [idempotent],
  request: {
    params: LaunchParam,
    headers: z.object(idempotencyHeaderShape),
    body: jsonBody(CreateLineItemBody),
  },
  responses: {
    201: jsonResponse(LineItemSchema, "Created by the platform."),
    409: errorResponses[409],
    502: { ...errorResponses[409], description: "`lti_platform_rejected` or `bad_gateway`." },
  },
});

export function registerCreateLtiLineItem(app: OpenAPIHono<AppEnv>) {
  app.openapi(createLtiLineItemRoute, async (c) => {
    const item = await createLineItem(principalContext(c), {
      launchId: c.req.valid("param").launch,
      body: c.req.valid("json"),
    });
    return c.json(item, 201);
  });
}
