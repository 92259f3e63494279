import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { jsonBody, jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { INSTITUTIONS } from "../../prefixes";
import { ComplianceDocumentParams, ComplianceDocumentSchema, PutComplianceDocumentBody } from "../schemas";
import { putComplianceDocument } from "../service";

export const putComplianceDocumentRoute = tokenRoute("institutions:write", {
  method: "put",
  path: `${INSTITUTIONS}/{id}/compliance/{type}`,
  tags: ["Institutions"],
  operationId: "putComplianceDocument",
  summary: "Record a compliance document (platform staff)",
  description:
    "Platform staff record where one compliance document stands: its status, whether it is required, when it was signed, when it expires and where the signed copy lives. The whole document is replaced. `signed` needs `signed_at` (not in the future); `expires_at` must be after `signed_at`. Anybody but platform staff: 403. Unknown institution: 404.",
  request: { params: ComplianceDocumentParams, body: jsonBody(PutComplianceDocumentBody) },
  responses: { 200: jsonResponse(ComplianceDocumentSchema, "The document as it now reads.") },
});

export function registerPutComplianceDocument(app: OpenAPIHono<AppEnv>) {
  app.openapi(putComplianceDocumentRoute, async (c) => {
    const { id, type } = c.req.valid("param");
    const document = await putComplianceDocument(principalContext(c), {
      institutionId: id,
      type,
      input: c.req.valid("json"),
    });
    return c.json(document, 200);
  });
}
