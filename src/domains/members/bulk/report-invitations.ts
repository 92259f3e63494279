import { nowIso } from "../../../platform/ids";
import type { PrincipalContext, ServiceContext } from "../../../platform/service/context";
import { invitationUrl, mintInvitation } from "../invitations";
import { invitationRolesShownTo } from "../policy";
import type { BulkJob, BulkReportRow } from "./jobs";
import { CLEAR_DUE, MINT_DUE, type MintedDueRow } from "./sql";

interface PageInvitations {
  job: BulkJob;
  rows: BulkReportRow[];
  /** The roles whose invitations the reader may see (members/policy.ts). */
  roles: string[];
  origin: string;
}

/**
 * Mints the invitations of the page's due rows, in one batch: a row's invitation is inserted only
 * while the row is still due, its member still `invited` with a role the reader may grant, and
 * without an invitation (a re-invite in between wins); the same batch clears those rows' due flags.
 * Two readers of one page at once: the second batch finds nothing due, so every invitation is shown
 * once. RETURNING says which were inserted. A row whose member has a role above the reader's stays
 * due, for a reader who may issue it.
 */
async function mintDue(ctx: ServiceContext, input: PageInvitations) {
  const { job, rows: due, roles, origin } = input;
  const shown = new Map<number, string>();
  if (due.length === 0) return shown;
  const now = nowIso(ctx.now());
  const minted = await Promise.all(
    due.map(async (row) => ({ row, invitation: await mintInvitation(ctx.now(), job.institutionId) })),
  );
  const rows = minted.map(({ row, invitation }) => ({
    line: row.line,
    user_id: row.userId,
    hash: invitation.tokenHash,
    expires_at: invitation.expiresAt,
  }));
  const d1 = ctx.d1;
  const allowed = JSON.stringify(roles);
  const [inserted] = await d1.batch<MintedDueRow>([
    d1.prepare(MINT_DUE).bind(JSON.stringify(rows), job.institutionId, now, job.id, allowed),
    d1.prepare(CLEAR_DUE).bind(job.id, JSON.stringify(due.map((r) => r.line)), allowed),
  ]);
  const insertedUsers = new Set((inserted?.results ?? []).map((r) => r.user_id));
  for (const { row, invitation } of minted) {
    if (row.userId && insertedUsers.has(row.userId))
      shown.set(row.line, invitationUrl(origin, invitation.token));
  }
  return shown;
}

/**
 * The invitation URLs a page of a queued upload's report shows, by line: each created member's
 * invitation is minted the first time its row is read by somebody who may issue it (valid 7 days
 * from then) and never shown again. Readers with `members:read` only see none and use none up.
 */
export async function invitationsOnFirstRead(
  ctx: PrincipalContext,
  input: { job: BulkJob; rows: BulkReportRow[]; origin: string },
): Promise<Map<number, string>> {
  const { job, rows, origin } = input;
  const roles: string[] = invitationRolesShownTo(ctx.principal);
  if (roles.length === 0 || job.dryRun) return new Map();
  return mintDue(ctx, { job, rows: rows.filter((r) => r.invitationDue && r.userId), roles, origin });
}
