import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { tokenRoute } from "../../../../platform/openapi";
import { errorResponses } from "../../../../platform/openapi-problems";
import { UTF8_BOM } from "../../../exports/csv";
import { CSV_CONTENT_TYPE } from "../../../exports/generate";
import { BULK_JOB } from "../../paths";
import { rejectedCsv } from "../report";
import { BulkJobParams, RejectedCsvQuery } from "../schemas";

export const rejectedCsvRoute = tokenRoute("members:read", {
  method: "get",
  path: `${BULK_JOB}/rejected.csv`,
  tags: ["Members"],
  operationId: "downloadRejectedRows",
  summary: "Download the rejected rows",
  description:
    "The rejected rows as uploaded (the file's own header and cells), in line order, with a `line` and a `reason` column added: fix them and upload this file again (the extra columns are ignored). RFC 4180, UTF-8, formula-guarded like every CSV of this API. `409 bulk_not_finished` while the job is queued or processing.",
  request: { params: BulkJobParams, query: RejectedCsvQuery },
  responses: {
    200: { description: "The CSV file.", content: { "text/csv": { schema: { type: "string" } } } },
    409: { ...errorResponses[409], description: "`bulk_not_finished` (extension member `bulk_status`)." },
  },
});

export function registerDownloadRejectedRows(app: OpenAPIHono<AppEnv>) {
  app.openapi(rejectedCsvRoute, async (c) => {
    const { id, job } = c.req.valid("param");
    const { bom } = c.req.valid("query");
    const { text } = await rejectedCsv(principalContext(c), { institutionId: id, jobId: job });
    const body = new TextEncoder().encode(text);
    const bytes = bom === "true" ? new Uint8Array([...UTF8_BOM, ...body]) : body;
    return new Response(bytes, {
      status: 200,
      headers: {
        "Content-Type": CSV_CONTENT_TYPE,
        "Content-Disposition": `attachment; filename="bulk-${job}-rejected.csv"`,
      },
    });
  });
}
