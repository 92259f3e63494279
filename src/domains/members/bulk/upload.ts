import type { BulkMode } from "../../../db/schema";
import { ApiError } from "../../../platform/errors";
import { newId } from "../../../platform/ids";
import type { PrincipalContext } from "../../../platform/service/context";
import { reachableInstitution } from "../service";
import { parseMemberCsv } from "./csv";
import {
  type BulkJob,
  enqueueBulk,
  IN_REQUEST_ROWS,
  markFailed,
  newJob,
  openJob,
  SYNC_THRESHOLD,
  storedFile,
} from "./jobs";
import { MemberIndex, type PlannedRow } from "./plan";
import { membersToSuspend, runJob } from "./runner";

export interface UploadInput {
  bytes: Uint8Array;
  dryRun: boolean;
  mode: BulkMode;
  force: boolean;
}

export type UploadResult =
  | { kind: "finished"; job: BulkJob; planned: PlannedRow[]; invitations: Map<number, string> }
  | { kind: "queued"; job: BulkJob };

function inProgress(): ApiError {
  return new ApiError(
    "bulk_in_progress",
    "Another bulk upload of this institution is still being processed; wait for it to finish (GET its job) and upload again.",
  );
}

/**
 * Checks the file as a whole, refuses a sync that would suspend too many members, records the job
 * (one active job per institution), then applies small files at once and queues large ones.
 */
export async function uploadMembers(
  ctx: PrincipalContext,
  input: UploadInput & { institutionId: string },
): Promise<UploadResult> {
  const { env, principal } = ctx;
  const institution = await reachableInstitution(ctx, input.institutionId);
  const parsed = parseMemberCsv(input.bytes);

  if (input.mode === "sync" && !input.force) {
    const index = await MemberIndex.load(ctx, institution.id);
    const suspend = membersToSuspend(index, parsed.rows, principal.user.id).length;
    const members = index.seatTakers;
    if (suspend > SYNC_THRESHOLD * members) {
      throw new ApiError(
        "sync_threshold_exceeded",
        `This sync would suspend ${suspend} of the institution's ${members} invited and active members, more than ${SYNC_THRESHOLD * 100} %; check the file, or send force=true if that is intended.`,
        { extensions: { would_suspend: suspend, members } },
      );
    }
  }

  const queued = parsed.rows.length > IN_REQUEST_ROWS;
  const job = newJob({
    id: newId("blk"),
    institutionId: institution.id,
    uploadedBy: principal.user.id,
    uploaderRole: principal.user.role,
    mode: input.mode,
    dryRun: input.dryRun,
    force: input.force,
    queued,
    header: parsed.header,
    totalRows: parsed.rows.length,
    now: ctx.now(),
  });

  if (queued) {
    // The file first: a queued job must find it. An upload refused below leaves it to be deleted.
    await env.EXPORTS_BUCKET.put(job.r2Key ?? "", storedFile(parsed), {
      httpMetadata: { contentType: "application/json" },
    });
    if (!(await openJob(ctx, job))) {
      await env.EXPORTS_BUCKET.delete(job.r2Key ?? "").catch(() => undefined);
      throw inProgress();
    }
    try {
      await enqueueBulk(ctx, { job_id: job.id, generation: 0 });
    } catch (error) {
      await markFailed(ctx, {
        jobId: job.id,
        reason: "The upload could not be queued; upload the file again.",
      });
      await env.EXPORTS_BUCKET.delete(job.r2Key ?? "").catch(() => undefined);
      throw error;
    }
    return { kind: "queued", job };
  }

  if (!(await openJob(ctx, job))) throw inProgress();
  try {
    const outcome = await runJob(ctx, {
      job,
      parsed,
      options: {
        chunkRows: IN_REQUEST_ROWS,
        deadline: Number.POSITIVE_INFINITY,
        invitations: "mint",
        collect: true,
      },
    });
    if (outcome.state !== "done") throw new Error(`in-request bulk job ${job.id} ended ${outcome.state}`);
    return { kind: "finished", job: outcome.job, planned: outcome.planned, invitations: outcome.invitations };
  } catch (error) {
    await markFailed(ctx, {
      jobId: job.id,
      reason: "The upload failed; upload the file again (rows already applied then show as unchanged).",
    });
    throw error;
  }
}
