import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../../../env";
import { ApiError, validationError } from "../../../../platform/errors";
import { acceptsBodyUpTo } from "../../../../platform/http/middleware";
import { errorResponses, jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { UTF8_BOM } from "../../../exports/csv";
import { CSV_CONTENT_TYPE } from "../../../exports/generate";
import { INSTITUTIONS } from "../../../institutions/prefixes";
import { InstitutionIdParam } from "../../../institutions/schemas";
import { bulkJobPath, plannedReportRows, presentReport, readReport, rejectedCsv } from "../report";
import {
  BulkJobParams,
  BulkReportQuery,
  BulkReportSchema,
  BulkUploadQuery,
  CSV_FORMAT_DOC,
  RejectedCsvQuery,
} from "../schemas";
import { uploadMembers } from "../upload";

const TAGS = ["Members"];

/** The CSV file of a bulk upload may be up to 5 MiB, more than the 1 MiB of every other body. */
const MAX_UPLOAD_BYTES = 5 * 1024 * 1024;

export const bulkUploadRoute = tokenRoute("members:write", {
  method: "post",
  path: `${INSTITUTIONS}/{id}/members/bulk`,
  tags: TAGS,
  operationId: "bulkUploadMembers",
  middleware: [acceptsBodyUpTo(MAX_UPLOAD_BYTES)],
  summary: "Provision members from a CSV file",
  description: `Send the CSV itself (\`Content-Type: text/csv\`) or \`multipart/form-data\` with a \`file\` part. A second upload to the same institution while one is processed is \`409 bulk_in_progress\`. A sample file: https://docs.lingua.example/samples/members.csv.\n\n${CSV_FORMAT_DOC}`,
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

export const getBulkJobRoute = tokenRoute("members:read", {
  method: "get",
  path: `${INSTITUTIONS}/{id}/members/bulk/{job}`,
  tags: TAGS,
  operationId: "getBulkUpload",
  summary: "Status and report of a bulk upload",
  description:
    "The job's status, counts and a page of its report rows (`page`, `per_page` up to 1,000, `outcome` to pick one). A queued upload's invitation URLs are issued the first time their row is read (valid 7 days from then), then never shown again; a member re-invited before that keeps that invitation and the row shows none. Another institution's job: 404.",
  request: { params: BulkJobParams, query: BulkReportQuery },
  responses: { 200: jsonResponse(BulkReportSchema, "The job and its report.") },
});

export const rejectedCsvRoute = tokenRoute("members:read", {
  method: "get",
  path: `${INSTITUTIONS}/{id}/members/bulk/{job}/rejected.csv`,
  tags: TAGS,
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

export function registerBulkRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(bulkUploadRoute, async (c) => {
    const { dry_run, mode, force } = c.req.valid("query");
    const institutionId = c.req.valid("param").id;
    const bytes = await uploadedBytes(c);
    const origin = new URL(c.req.url).origin;
    const result = await uploadMembers({
      env: c.env,
      principal: c.var.principal,
      institutionId,
      input: { bytes, dryRun: dry_run, mode, force },
    });
    if (result.kind === "queued") {
      const location = `${origin}${bulkJobPath(result.job)}`;
      c.header("Location", location);
      const meta = { total: 0, per_page: 1000, current_page: 1, last_page: 1, next: null };
      return c.json(presentReport(result.job, origin, [], meta), 202);
    }
    const rows = plannedReportRows(result.planned, result.invitations, origin);
    const meta = { total: rows.length, per_page: rows.length, current_page: 1, last_page: 1, next: null };
    return c.json(presentReport(result.job, origin, rows, meta), 200);
  });

  // The static `bulk` segment beside `/members/{member}` moves this group's Hono from its RegExpRouter
  // to its TrieRouter (under a microsecond a request); registered before the member routes, the
  // router picks it, as webhooks' event-types does.
  app.openapi(getBulkJobRoute, async (c) => {
    const { id, job } = c.req.valid("param");
    const { page, per_page, outcome } = c.req.valid("query");
    const report = await readReport({
      env: c.env,
      principal: c.var.principal,
      institutionId: id,
      jobId: job,
      page,
      perPage: per_page,
      outcome,
      requestUrl: c.req.url,
    });
    return c.json(report, 200);
  });

  app.openapi(rejectedCsvRoute, async (c) => {
    const { id, job } = c.req.valid("param");
    const { bom } = c.req.valid("query");
    const { text } = await rejectedCsv(c.env, c.var.principal, id, job);
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
