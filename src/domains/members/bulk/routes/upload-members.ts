import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../../../env";
import { ApiError, validationError } from "../../../../platform/errors";
import { principalContext } from "../../../../platform/http/context-middleware";
import { acceptsBodyUpTo } from "../../../../platform/http/middleware";
import { jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { errorResponses } from "../../../../platform/openapi-problems";
import { BULK } from "../../paths";
import { InstitutionIdParam } from "../../schemas";
import { bulkJobPath, plannedReportRows, presentReport } from "../report";
import { BulkReportSchema, BulkUploadQuery, CSV_FORMAT_DOC } from "../schemas";
import { uploadMembers } from "../upload";

/** The CSV file of a bulk upload may be up to 5 MiB, more than the 1 MiB of every other body. */
const MAX_UPLOAD_BYTES = 5 * 1024 * 1024;

export const bulkUploadRoute = tokenRoute("members:write", {
  method: "post",
  path: BULK,
  tags: ["Members"],
  operationId: "bulkUploadMembers",
  middleware: [acceptsBodyUpTo(MAX_UPLOAD_BYTES)],
  summary: "Provision members from a CSV file",
  description: `Send the CSV itself (\`Content-Type: text/csv\`) or \`multipart/form-data\` with a \`file\` part. A second upload to the same institution while one is processed is \`409 bulk_in_progress\`. A small file:\n\n\`\`\`csv\nemail,first_name,last_name,role,external_id,groups\nana.lima@school.example,Ana,Lima,learner,S-10023,Year 7;French\nbo.berg@school.example,Bo,Berg,learner,S-10024,Year 7\n\`\`\`\n\n${CSV_FORMAT_DOC}`,
  request: {
    params: InstitutionIdParam,
    query: BulkUploadQuery,
    body: {
      required: true,
      content: {
        "text/csv": {
          schema: {
            type: "string",
            example:
              "email,name,role,external_id,groups\r\nana@acme.example,Ana Lima,learner,SIS-1,class-7b;french\r\n",
          },
        },
        "multipart/form-data": {
          schema: {
            type: "object",
            properties: { file: { type: "string", format: "binary", description: "The CSV file." } },
            required: ["file"],
          },
        },
      },
    },
  },
  responses: {
    200: jsonResponse(BulkReportSchema, "Up to 1,000 data rows: the finished report."),
    202: {
      ...jsonResponse(BulkReportSchema, "More rows: the job, `queued`; poll `Location`."),
      headers: { Location: { description: "The job's URL.", schema: { type: "string" } } },
    },
    409: {
      ...errorResponses[409],
      description:
        "`bulk_in_progress`, or `sync_threshold_exceeded` (extension members `would_suspend` and `members`).",
    },
    413: { ...errorResponses[413], description: "The body is larger than 5 MiB." },
    415: { ...errorResponses[415], description: "The body is neither `text/csv` nor `multipart/form-data`." },
    422: {
      ...errorResponses[422],
      description:
        "The file is not UTF-8, empty, has no `email` column or more than 50,000 data rows (`errors[0].path` is `file`).",
    },
  },
});

/** The uploaded file's bytes, from a `text/csv` body or a multipart `file` part. */
async function uploadedBytes(c: Context<AppEnv>): Promise<Uint8Array> {
  const type = (c.req.header("Content-Type") ?? "").toLowerCase();
  if (type.startsWith("text/csv")) return new Uint8Array(await c.req.arrayBuffer());
  if (type.startsWith("multipart/form-data")) {
    const form = await c.req.formData().catch(() => {
      throw new ApiError("bad_request", "The multipart body could not be read.");
    });
    const file = form.get("file") as unknown as File | string | null;
    if (file === null)
      throw validationError([{ path: "file", message: "is required (a multipart part named `file`)" }]);
    return typeof file === "string"
      ? new TextEncoder().encode(file)
      : new Uint8Array(await file.arrayBuffer());
  }
  throw new ApiError(
    "unsupported_media_type",
    "Send the CSV file as `Content-Type: text/csv`, or as `multipart/form-data` with a `file` part.",
  );
}

export function registerUploadMembers(app: OpenAPIHono<AppEnv>) {
  app.openapi(bulkUploadRoute, async (c) => {
    const { dry_run, mode, force } = c.req.valid("query");
    const institutionId = c.req.valid("param").id;
    const bytes = await uploadedBytes(c);
    const origin = new URL(c.req.url).origin;
    const result = await uploadMembers(principalContext(c), {
      institutionId,
      bytes,
      dryRun: dry_run,
      mode,
      force,
    });
    if (result.kind === "queued") {
      const location = `${origin}${bulkJobPath(result.job)}`;
      c.header("Location", location);
      const meta = { total: 0, per_page: 1000, current_page: 1, last_page: 1, next: null };
      return c.json(presentReport(result.job, origin, [], meta), 202);
    }
    const rows = plannedReportRows(result.job, result.planned, result.invitations, origin);
    const meta = { total: rows.length, per_page: rows.length, current_page: 1, last_page: 1, next: null };
    return c.json(presentReport(result.job, origin, rows, meta), 200);
  });
}
