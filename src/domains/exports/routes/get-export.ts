import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { EXPORTS } from "../prefixes";
import { presentExport } from "../present";
import { ExportIdParam, ExportSchema } from "../schemas";
import { getExport } from "../service";

export const getExportRoute = tokenRoute("exports:read", {
  method: "get",
  path: `${EXPORTS}/{id}`,
  tags: ["Exports"],
  operationId: "getExport",
  summary: "Status of an export",
  description:
    "Status, progress (rows written so far) and, once completed, size and download URL. Another institution's export: 404.",
  request: { params: ExportIdParam },
  responses: { 200: jsonResponse(ExportSchema, "The export.") },
});

export function registerGetExport(app: OpenAPIHono<AppEnv>) {
  app.openapi(getExportRoute, async (c) => {
    const job = await getExport(principalContext(c), c.req.valid("param").id);
    return c.json(presentExport(job, new URL(c.req.url).origin), 200);
  });
}
