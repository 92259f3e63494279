import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { idempotencyHeaderShape, idempotent } from "../../../platform/http/idempotency";
import { jsonBody, jsonResponse, tokenRoute } from "../../../platform/openapi";
import { errorResponses } from "../../../platform/openapi-problems";
import { EXPORTS } from "../prefixes";
import { presentExport } from "../present";
import { CreateExportBody, columnsDocumentation, ExportSchema } from "../schemas";
import { createExport } from "../service";

export const createExportRoute = tokenRoute("exports:write", {
  method: "post",
  path: EXPORTS,
  tags: ["Exports"],
  operationId: "createExport",
  summary: "Request a CSV export",
  description: `Starts generating a CSV file of your institution's data in the background and answers at once
with the job (\`queued\`) and its URL in \`Location\`. Poll \`GET /api/integrations/exports/{id}\` (or listen for the
\`export.completed\` / \`export.failed\` webhooks), then download it from \`download_url\` (absolute here; in the
\`export.completed\` event a path relative to this API's base URL). Files are kept for 7 days.

Filters: \`from\`/\`to\` (ISO 8601, compared at second precision; \`to\` must be after \`from\`), \`course_id\` (a published
course: an unpublished one is refused exactly as an unknown one), \`user_ids\` (up to 100 members of your institution; anything else is 422). The \`activity\` export holds the
attempts recorded up to the second of the request (whole-second timestamps); the others the state when each row is read.

The file: UTF-8, RFC 4180 (comma, \`"\` quoting, CRLF line ends), a header row, empty cells for nulls; text cells that
begin with \`=\`, \`+\`, \`-\`, \`@\`, tab, carriage return or NUL are prefixed with \`'\` against formula injection; numbers stay numbers.

${columnsDocumentation()}`,
  middleware: [idempotent],
  request: { headers: z.object(idempotencyHeaderShape), body: jsonBody(CreateExportBody) },
  responses: {
    202: {
      ...jsonResponse(ExportSchema, "Accepted: the export job, `queued`."),
      headers: { Location: { description: "The export's URL.", schema: { type: "string" } } },
    },
    409: { ...errorResponses[409], description: "A request with this Idempotency-Key is still in flight." },
  },
});

export function registerCreateExport(app: OpenAPIHono<AppEnv>) {
  app.openapi(createExportRoute, async (c) => {
    const job = await createExport(principalContext(c), c.req.valid("json"));
    const url = new URL(`/api/integrations/exports/${job.id}`, c.req.url);
    c.header("Location", url.toString());
    return c.json(presentExport(job, url.origin), 202);
  });
}
