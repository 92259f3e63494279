import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { idempotencyHeaderShape, idempotent } from "../../../../platform/http/idempotency";
import { jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { errorResponses } from "../../../../platform/openapi-problems";
import { BULK_JOB } from "../../paths";
import { reissueBulkInvitations } from "../reissue";
import { bulkJobPath } from "../report";
import { BulkJobParams, MAX_REPORT_ROWS, ReissuedInvitationsSchema } from "../schemas";

export const reissueBulkInvitationsRoute = tokenRoute("members:write", {
  method: "post",
  path: `${BULK_JOB}/invitations`,
  tags: ["Members"],
  operationId: "reissueBulkInvitations",
  summary: "Re-issue an upload's invitations",
  description: `For a finished upload whose report links were lost or expired: every member it created who is still \`invited\` gets a new single-use invitation (valid 7 days), once per call, as a re-invite gives one — the previous link stops working. The answer carries the new links of the first ${MAX_REPORT_ROWS.toLocaleString("en")} created rows; beyond them, \`next\` is the report page that shows the rest the first time it is read. Members who accepted meanwhile, were removed or suspended, or have a role above yours are left alone and counted in \`skipped\`. No request body. Another institution's job: 404.`,
  middleware: [idempotent],
  request: { params: BulkJobParams, headers: z.object(idempotencyHeaderShape) },
  responses: {
    201: jsonResponse(ReissuedInvitationsSchema, "The re-issued invitations."),
    409: {
      ...errorResponses[409],
      description:
        "`bulk_not_finished` while the upload is queued or processing (extension member `bulk_status`); `conflict` for a dry run, which created nobody; or an Idempotency-Key in flight.",
    },
  },
});

export function registerReissueBulkInvitations(app: OpenAPIHono<AppEnv>) {
  app.openapi(reissueBulkInvitationsRoute, async (c) => {
    const { id, job } = c.req.valid("param");
    const origin = new URL(c.req.url).origin;
    const result = await reissueBulkInvitations(principalContext(c), {
      institutionId: id,
      jobId: job,
      origin,
    });
    const next = result.more
      ? `${origin}${bulkJobPath(result.job)}?outcome=created&per_page=${MAX_REPORT_ROWS}&page=2`
      : null;
    return c.json(
      {
        job_id: result.job.id,
        reissued: result.reissued,
        skipped: result.skipped,
        invitations: result.invitations.map((i) => ({
          line: i.line,
          member_id: i.memberId,
          email: i.email,
          invitation_url: i.url,
        })),
        next,
      },
      201,
    );
  });
}
