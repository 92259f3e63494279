import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { BULK_JOB } from "../../paths";
import { readReport } from "../report";
import { BulkJobParams, BulkReportQuery, BulkReportSchema } from "../schemas";

export const getBulkJobRoute = tokenRoute("members:read", {
  method: "get",
  path: BULK_JOB,
  tags: ["Members"],
  operationId: "getBulkUpload",
  summary: "Status and report of a bulk upload",
  description:
    "The job's status, counts and a page of its report rows (`page`, `per_page` up to 1,000, `outcome` to pick one). A queued upload's invitation URLs are issued the first time their row is read (valid 7 days from then), then never shown again; a member re-invited before that keeps that invitation and the row shows none. After `POST …/bulk/{job}/invitations` re-issued a member's invitation, its row shows the new link the first time it is read (beyond that answer's first page). Another institution's job: 404.",
  request: { params: BulkJobParams, query: BulkReportQuery },
  responses: { 200: jsonResponse(BulkReportSchema, "The job and its report.") },
});

// The static `bulk` segment beside `/members/{member}` moves this group's Hono from its RegExpRouter
// to its TrieRouter (under a microsecond a request); registered before the member routes, the
// router picks it, as webhooks' event-types does.
export function registerGetBulkUpload(app: OpenAPIHono<AppEnv>) {
  app.openapi(getBulkJobRoute, async (c) => {
    const { id, job } = c.req.valid("param");
    const { page, per_page, outcome } = c.req.valid("query");
    const report = await readReport(principalContext(c), {
      institutionId: id,
      jobId: job,
      page,
      perPage: per_page,
      outcome,
      requestUrl: c.req.url,
    });
    return c.json(report, 200);
  });
}
