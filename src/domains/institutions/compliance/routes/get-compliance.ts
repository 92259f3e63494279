import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { INSTITUTIONS } from "../../prefixes";
import { ComplianceParams, ComplianceSchema } from "../schemas";
import { readCompliance } from "../service";

export const getComplianceRoute = tokenRoute("compliance:read", {
  method: "get",
  path: `${INSTITUTIONS}/{id}/compliance`,
  tags: ["Institutions"],
  operationId: "getCompliance",
  summary: "Compliance documentation status",
  description:
    "Where each compliance document of the institution stands (DPA, GDPR, FERPA, COPPA, SOC 2 report, VPAT), and whether anything needs action. Every type is listed; one nobody has recorded yet reads `not_started` with its default `required`. A signed document past its `expires_at` reads `expired`. Institution admins read their own institution; platform staff every one. Another institution's id: 404.",
  request: { params: ComplianceParams },
  responses: { 200: jsonResponse(ComplianceSchema, "The institution's compliance status.") },
});

export function registerGetCompliance(app: OpenAPIHono<AppEnv>) {
  app.openapi(getComplianceRoute, async (c) => {
    const body = await readCompliance(principalContext(c), c.req.valid("param").id);
    return c.json(body, 200);
  });
}
