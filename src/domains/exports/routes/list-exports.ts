import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { paginate } from "../../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { EXPORTS } from "../prefixes";
import { presentExport } from "../present";
import { ExportPageSchema, ListExportsQuery } from "../schemas";
import { listExports } from "../service";

export const listExportsRoute = tokenRoute("exports:read", {
  method: "get",
  path: EXPORTS,
  tags: ["Exports"],
  operationId: "listExports",
  summary: "List export jobs",
  description:
    "Your institution's exports, newest first (ties by id), optionally only those of one `status` or `type`.",
  request: { query: ListExportsQuery },
  responses: { 200: jsonResponse(ExportPageSchema, "A page of exports.") },
});

export function registerListExports(app: OpenAPIHono<AppEnv>) {
  app.openapi(listExportsRoute, async (c) => {
    const { page, per_page, status, type } = c.req.valid("query");
    const { total, rows } = await listExports(principalContext(c), {
      page: { page, per_page },
      status,
      type,
    });
    const origin = new URL(c.req.url).origin;
    return c.json(
      paginate(
        c,
        { page, per_page },
        total,
        rows.map((job) => presentExport(job, origin)),
      ),
      200,
    );
  });
}
