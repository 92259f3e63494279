import { fromBase64 } from "../../platform/crypto/encoding";
import { renewed } from "../../platform/jobs/lease";
import type { ServiceContext } from "../../platform/service/context";
import { type ExportSettings, MAX_PARTS } from "./config";
import { csvHeader } from "./csv";
import { type ExportJob, findJob, markCompleted, renewLease, saveCheckpoint } from "./jobs";
import {
  type ExportSource,
  type Row,
  type RowKey,
  SOURCES,
  type SourceScope,
  type TextPage,
} from "./sources";
import { ExportFailure, LeaseLost, lastLine, type PartSink, PartWriter } from "./writer";

export const CSV_CONTENT_TYPE = "text/csv; charset=utf-8";

export interface Invocation {
  job: ExportJob;
  leaseId: string;
  settings: ExportSettings;
  /** After this instant (ms), hand over at the next part boundary. */
  deadline: number;
}

/**
 * One invocation's share of a job: from the job's checkpoint, read pages in key order, write them
 * as CSV into R2 parts (checkpointing after each), and either finish the file or stop at a part
 * boundary once the time budget is spent. Returns "continue" when the job needs another invocation.
 */
export async function generate(
  ctx: ServiceContext,
  invocation: Invocation,
): Promise<"continue" | "completed"> {
  const { job, leaseId, settings } = invocation;
  const bucket = ctx.env.EXPORTS_BUCKET;
  const source = SOURCES[job.type];
  if (!source) throw new ExportFailure(`Unknown export type ${job.type}.`);
  const lease = new JobLease(ctx, job, leaseId);

  // Every part was uploaded by an earlier invocation, which did not live to complete the upload.
  if (job.rowCount !== null && job.byteSize !== null && job.uploadId) {
    await lease.hold();
    await completeUpload(bucket, job.r2Key, job.uploadId, job.parts, job.byteSize);
    await finish(ctx, { job, leaseId, settings, totals: { rowCount: job.rowCount, byteSize: job.byteSize } });
    return "completed";
  }

  const partSize = job.partSize ?? settings.partSize;
  const upload = new JobUpload(bucket, job.r2Key, job.uploadId);
  const sink: PartSink = {
    async uploadPart(partNumber, bytes) {
      await lease.hold();
      return upload.uploadPart(partNumber, bytes);
    },
    checkpoint(state, previousParts) {
      const target = { id: job.id, uploadId: upload.id, partSize };
      return saveCheckpoint(ctx, {
        job: target,
        leaseId,
        state,
        expectedParts: previousParts,
        leaseUntil: lease.until(),
      });
    },
  };
  const writer = new PartWriter(
    partSize,
    { parts: job.parts, cursor: job.cursor ?? { key: null, carry: "" }, progress: job.progress },
    sink,
    MAX_PARTS,
  );
  if (job.cursor === null) await writer.appendHeader(csvHeader(source.columns.map((c) => c.name)));
  else if (job.cursor.carry) await writer.appendCarry(fromBase64(job.cursor.carry));

  if ((await writePages(ctx, source, writer, invocation)) === "continue") return "continue";
  await lease.hold();
  const totals = await storeFile(bucket, job.r2Key, writer, upload);
  await finish(ctx, { job, leaseId, settings, totals });
  return "completed";
}

/**
 * The job's lease, renewed at every checkpoint and before every write to R2. Checkpoints guard D1,
 * but not R2: an invocation that stalled past its lease could upload a part over the one its
 * successor wrote, or the whole file after the job failed. So every write to R2 first renews the
 * lease, and a stale invocation stops there. (A stall between the renewal and the write is left;
 * the renewal gives it a full lease to run out in.)
 */
class JobLease {
  constructor(
    private readonly ctx: ServiceContext,
    private readonly job: ExportJob,
    private readonly leaseId: string,
  ) {}

  until(): number {
    return renewed(this.ctx.now()).leaseUntil;
  }

  async hold(): Promise<void> {
    const renewal = { job: this.job, leaseId: this.leaseId, leaseUntil: this.until() };
    if (!(await renewLease(this.ctx, renewal))) throw new LeaseLost();
  }
}

/** The job's multipart upload, created with the first full part: a file that fits one part is a plain PUT. */
class JobUpload {
  private upload: R2MultipartUpload | null;

  constructor(
    private readonly bucket: R2Bucket,
    private readonly key: string,
    uploadId: string | null,
  ) {
    this.upload = uploadId ? bucket.resumeMultipartUpload(key, uploadId) : null;
  }

  async uploadPart(partNumber: number, bytes: Uint8Array): Promise<{ partNumber: number; etag: string }> {
    this.upload ??= await this.bucket.createMultipartUpload(this.key, {
      httpMetadata: { contentType: CSV_CONTENT_TYPE },
    });
    const part = await this.upload.uploadPart(partNumber, bytes);
    return { partNumber: part.partNumber, etag: part.etag };
  }

  /** The upload's id; a checkpoint always follows an uploaded part, so it exists by then. */
  get id(): string {
    if (!this.upload) throw new Error("no multipart upload before its first part");
    return this.upload.uploadId;
  }
}

/**
 * Reads the pages after the job's cursor and writes them, the next page read while this one is
 * written and uploaded. "continue" when out of time: stopped at the last part boundary (the rows
 * after it are read again next time), but only once this invocation has cut a part, so that every
 * invocation moves the job on.
 */
async function writePages(
  ctx: ServiceContext,
  source: ExportSource,
  writer: PartWriter,
  { job, settings, deadline }: Invocation,
): Promise<"continue" | "done"> {
  const scope = { institutionId: job.institutionId, filters: job.filters, asOf: job.createdAt };
  const width = source.columns.length;
  const read = (after: RowKey | null) => readPage(ctx, source, scope, after, settings.pageSize);
  let next: Promise<Page> | null = read(job.cursor?.key ?? null);
  try {
    while (next) {
      const page: Page = await next;
      next = null;
      if (page.count === settings.pageSize) next = read(lastKey(source, page));
      if ("rows" in page) await writer.appendPage(page.rows, width, source.key);
      else await writer.appendText(page.bytes, page.count, page.lineKey);
      if (next && ctx.now() >= deadline && writer.partsCut > 0) {
        await writer.settle();
        return "continue";
      }
    }
  } finally {
    // A page read ahead and not used must not reject unobserved.
    (next as Promise<Page> | null)?.catch(() => undefined);
  }
  return "done";
}

/** Puts the whole file (one part or fewer) or completes the multipart upload; returns the file's totals. */
async function storeFile(
  bucket: R2Bucket,
  key: string,
  writer: PartWriter,
  upload: JobUpload,
): Promise<{ rowCount: number; byteSize: number }> {
  const end = await writer.finish();
  if ("single" in end) {
    await bucket.put(key, end.single, { httpMetadata: { contentType: CSV_CONTENT_TYPE } });
    return { rowCount: writer.rowCount, byteSize: end.single.length };
  }
  const { totals } = end.checkpoint;
  if (!totals) throw new Error("the last checkpoint carries the file's totals");
  await completeUpload(bucket, key, upload.id, end.checkpoint.parts, totals.byteSize);
  return totals;
}

type Page = { rows: Row[]; count: number } | (TextPage & { lineKey: (line: string) => RowKey });

/** A page as SQLite's CSV text where the source writes it and every row of it is plain, else as rows. */
async function readPage(
  ctx: ServiceContext,
  source: ExportSource,
  scope: SourceScope,
  after: RowKey | null,
  limit: number,
): Promise<Page> {
  if (source.text) {
    const page = await source.text.page(ctx, scope, after, limit);
    if (page) return { ...page, lineKey: source.text.lineKey };
  }
  const rows = await source.page(ctx, scope, after, limit);
  return { rows, count: rows.length };
}

/** The key of a full page's last row. */
function lastKey(source: ExportSource, page: Page): RowKey {
  if (!("rows" in page)) return page.lineKey(lastLine(page.bytes));
  const last = page.rows.at(-1);
  if (!last) throw new Error("an empty page has no last key");
  return source.key(last);
}

/**
 * Completes the multipart upload. If an earlier invocation completed it and died before recording
 * that, the upload is gone but the object is there, of the recorded size.
 */
async function completeUpload(
  bucket: R2Bucket,
  key: string,
  uploadId: string,
  parts: ExportJob["parts"],
  byteSize: number,
): Promise<void> {
  try {
    await bucket.resumeMultipartUpload(key, uploadId).complete(parts);
  } catch (error) {
    const existing = await bucket.head(key);
    if (existing?.size === byteSize) return;
    throw error;
  }
}

/**
 * Records the job `completed` (its event committed with it). If the lease was lost meanwhile, the
 * job was failed or completed by another invocation: a failed job's file, just written here, must
 * not outlive it; a job completed elsewhere keeps its (same) file.
 */
async function finish(
  ctx: ServiceContext,
  input: {
    job: ExportJob;
    leaseId: string;
    settings: ExportSettings;
    totals: { rowCount: number; byteSize: number };
  },
): Promise<void> {
  const { job, leaseId, settings, totals } = input;
  if (await markCompleted(ctx, { job, leaseId, totals, retentionDays: settings.retentionDays })) return;
  if ((await findJob(ctx, job.id))?.status === "failed") await ctx.env.EXPORTS_BUCKET.delete(job.r2Key);
  throw new LeaseLost();
}
