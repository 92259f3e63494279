import { enforce } from "../../../platform/auth/policy";
import { ApiError } from "../../../platform/errors";
import { commit } from "../../../platform/service/commit";
import type { PrincipalContext } from "../../../platform/service/context";
import { invitationRolesShownTo, mayReissueBulkInvitations } from "../policy";
import { type BulkJob, reportRows } from "./jobs";
import { findJobInScope } from "./report";
import { invitationsOnFirstRead } from "./report-invitations";
import { MAX_REPORT_ROWS } from "./schemas";
import {
  REISSUE_MARK,
  REISSUE_REVOKE,
  REISSUE_SKIPPED,
  type ReissuedRow,
  type ReissueSkippedRow,
} from "./sql";

export interface ReissuedInvitations {
  job: BulkJob;
  /** Members whose invitation was re-issued (their previous links stopped working). */
  reissued: number;
  skipped: ReissueSkippedRow;
  /** The first page (by line) of re-issued members, each with its fresh link where this call minted it. */
  invitations: { line: number; memberId: string; email: string | null; url: string }[];
  /** More re-issued rows than one page: the report page after the first, whose links mint on first read. */
  more: boolean;
}

/**
 * Re-issues the invitations of a finished upload's members who are still invited: when the report
 * that showed their links was lost, or the links expired. In one batch, each such member's open
 * invitation is deleted (its link stops working, as after a re-invite) and its row marked due again;
 * then the first report page of created rows is read as the report reads it, which mints those rows'
 * invitations, each once. The rest mint when their page of the report is first read. Members the
 * caller may not invite (role above theirs), removed, suspended or active ones are left alone and
 * counted. Another institution's job 404; a job still running `409 bulk_not_finished`; a dry run
 * (it created nobody) `409 conflict`.
 */
export async function reissueBulkInvitations(
  ctx: PrincipalContext,
  input: { institutionId: string; jobId: string; origin: string },
): Promise<ReissuedInvitations> {
  const job = await findJobInScope(ctx, input);
  enforce(mayReissueBulkInvitations(ctx.principal));
  if (job.status === "queued" || job.status === "processing") {
    throw new ApiError(
      "bulk_not_finished",
      "The upload is still being processed; re-issue its invitations once it is `completed`.",
      { extensions: { bulk_status: job.status } },
    );
  }
  if (job.dryRun) {
    throw new ApiError("conflict", "A dry run created nobody: it has no invitations to re-issue.");
  }
  const roles = JSON.stringify(invitationRolesShownTo(ctx.principal));
  const d1 = ctx.d1;
  // Mark first, then delete: both select the same members (invited, of the institution, a role the
  // caller may grant), and one batch is one transaction.
  const {
    results: [marked],
  } = await commit(ctx, {
    statements: [
      d1.prepare(REISSUE_MARK).bind(job.id, job.institutionId, roles),
      d1.prepare(REISSUE_REVOKE).bind(job.id, job.institutionId, roles),
    ],
  });
  const markedRows = (marked?.results ?? []) as ReissuedRow[];
  const reissued = markedRows.length;
  const skipped = (await d1
    .prepare(REISSUE_SKIPPED)
    .bind(job.id, job.institutionId, roles)
    .first<ReissueSkippedRow>()) ?? { removed: 0, accepted: 0, suspended: 0, role_above_yours: 0 };
  const { rows } = await reportRows(ctx, {
    jobId: job.id,
    outcome: "created",
    limit: MAX_REPORT_ROWS,
    offset: 0,
  });
  const urls = await invitationsOnFirstRead(ctx, { job, rows, origin: input.origin });
  const markedLines = markedRows.map((r) => r.line);
  const invitations = rows.flatMap((row) => {
    const url = urls.get(row.line);
    return url && row.userId ? [{ line: row.line, memberId: row.userId, email: row.email, url }] : [];
  });
  const lastLine = rows.at(-1)?.line;
  const more = lastLine !== undefined && markedLines.some((line) => line > lastLine);
  return { job, reissued, skipped, invitations, more };
}
