import type { z } from "@hono/zod-openapi";
import { downloadPath, type ExportJob } from "./jobs";
import type { ExportSchema } from "./schemas";

/** A job on the wire; `origin` makes the download URL absolute. */
export function presentExport(job: ExportJob, origin: string): z.infer<typeof ExportSchema> {
  return {
    id: job.id,
    type: job.type,
    filters: job.filters,
    status: job.status,
    row_count: job.status === "completed" || job.status === "expired" ? job.rowCount : null,
    byte_size: job.status === "completed" || job.status === "expired" ? job.byteSize : null,
    progress: job.progress,
    error: job.status === "failed" ? job.error : null,
    requested_by: job.requestedBy,
    created_at: job.createdAt,
    started_at: job.startedAt,
    completed_at: job.completedAt,
    expires_at: job.expiresAt,
    download_url: job.status === "completed" ? new URL(downloadPath(job.id), origin).toString() : null,
  };
}
