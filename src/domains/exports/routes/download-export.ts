import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { tokenRoute } from "../../../platform/openapi";
import { ProblemSchema } from "../../../platform/openapi-problems";
import { UTF8_BOM } from "../csv";
import { CSV_CONTENT_TYPE } from "../generate";
import { EXPORTS } from "../prefixes";
import { columnsDocumentation, DownloadQuery, ExportConflictProblemSchema, ExportIdParam } from "../schemas";
import { openDownload } from "../service";

export const downloadExportRoute = tokenRoute("exports:read", {
  method: "get",
  path: `${EXPORTS}/{id}/download`,
  tags: ["Exports"],
  operationId: "downloadExport",
  summary: "Download a completed export",
  description: `Streams the CSV file from storage (\`Content-Length\`, \`ETag\`; \`If-None-Match\` answers 304). \`bom=true\`
prepends a UTF-8 byte-order mark for Excel. While the export is \`queued\` or \`processing\`: 409 \`export_not_ready\`
with \`Retry-After\`; \`failed\`: 409 \`export_failed\` with the reason. Both 409s carry the export's \`export_status\`
and \`progress\` (rows written so far) as problem extension members. Past its retention: 410 \`export_expired\`.

${columnsDocumentation()}`,
  request: { params: ExportIdParam, query: DownloadQuery },
  responses: {
    200: {
      description: "The CSV file.",
      headers: {
        "Content-Disposition": {
          description:
            'attachment; filename="lingua-<type>-<institution>-<YYYY-MM-DD>-<last 8 characters of the export id>.csv", e.g. `lingua-activity-acme-2026-11-21-8C9D0E1F.csv`: exports of one day get different names.',
          schema: { type: "string" },
        },
        "Content-Length": { description: "Size in bytes.", schema: { type: "integer" } },
        ETag: { description: "Changes with the file (and with `bom`).", schema: { type: "string" } },
      },
      content: { "text/csv; charset=utf-8": { schema: z.string().openapi({ format: "binary" }) } },
    },
    304: { description: "Not modified: `If-None-Match` matches the file's ETag." },
    409: {
      description:
        "`export_not_ready` (queued or processing; see `Retry-After`) or `export_failed` (`detail` says why); both with the extension members `export_status` and `progress`.",
      content: { "application/problem+json": { schema: ExportConflictProblemSchema } },
      headers: {
        "Retry-After": {
          description: "Seconds to wait before polling again (`export_not_ready` only).",
          schema: { type: "integer" },
        },
      },
    },
    410: {
      description: "`export_expired`: the export's retention is over and its file is deleted.",
      content: { "application/problem+json": { schema: ProblemSchema } },
    },
  },
});

/** Does an If-None-Match header name this ETag (or `*`)? Weak comparison, as RFC 9110 asks for it. */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const bare = (tag: string) => tag.trim().replace(/^W\//, "");
  return ifNoneMatch.split(",").some((tag) => tag.trim() === "*" || bare(tag) === bare(etag));
}

export function registerDownloadExport(app: OpenAPIHono<AppEnv>) {
  app.openapi(downloadExportRoute, async (c) => {
    const bom = c.req.valid("query").bom === "true";
    const etagOf = (object: R2Object) => (bom ? `"${object.etag}-bom"` : object.httpEtag);
    const ifNoneMatch = c.req.header("If-None-Match");
    const opened = await openDownload(principalContext(c), {
      id: c.req.valid("param").id,
      isCurrent: ifNoneMatch ? (object) => matches(ifNoneMatch, etagOf(object)) : undefined,
    });
    const headers = new Headers({ ETag: etagOf(opened.object) });
    if ("notModified" in opened) return new Response(null, { status: 304, headers });
    const { fileName, object } = opened;
    headers.set("Content-Type", CSV_CONTENT_TYPE);
    headers.set("Content-Disposition", `attachment; filename="${fileName}"`);
    headers.set("Content-Length", String(object.size + (bom ? UTF8_BOM.length : 0)));
    if (!bom) return new Response(object.body, { status: 200, headers });
    // Straight from R2 to the client, never whole in memory; the BOM goes in front of the stream.
    const { readable, writable } = new FixedLengthStream(object.size + UTF8_BOM.length);
    const writer = writable.getWriter();
    void writer
      .write(UTF8_BOM)
      .then(() => {
        writer.releaseLock();
        return object.body.pipeTo(writable);
      })
      .catch(() => undefined);
    return new Response(readable, { status: 200, headers });
  });
}
