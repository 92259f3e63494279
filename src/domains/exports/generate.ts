import type { Env } from "../../env";
import { fromBase64 } from "../../platform/crypto/encoding";
import { type Database, database } from "../../platform/db";
import { publishEvents } from "../../platform/events";
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

/** How long a claim lasts beyond the time budget; every checkpoint renews it. */
export const LEASE_MARGIN_MS = 120_000;

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
  env: Env,
  { job, leaseId, settings, deadline }: Invocation,
): Promise<"continue" | "completed"> {
  const db = database(env.DB);
  const source = SOURCES[job.type];
  if (!source) throw new ExportFailure(`Unknown export type ${job.type}.`);
  const leaseUntil = () => Date.now() + settings.timeBudgetMs + LEASE_MARGIN_MS;
  // Checkpoints guard D1, but not R2: an invocation that stalled past its lease could upload a part
  // over the one its successor wrote, or the whole file after the job failed. So every write to R2
  // first renews the lease, and a stale invocation stops there. (A stall between the renewal and
  // the write is left; the renewal gives it a full lease to run out in.)
  const holdLease = async () => {
    if (!(await renewLease(db, job, leaseId, leaseUntil()))) throw new LeaseLost();
  };

  // Every part was uploaded by an earlier invocation, which did not live to complete the upload.
  if (job.rowCount !== null && job.byteSize !== null && job.uploadId) {
    await holdLease();
    await completeUpload(env.EXPORTS_BUCKET, job.r2Key, job.uploadId, job.parts, job.byteSize);
    await finish(env, job, leaseId, settings, { rowCount: job.rowCount, byteSize: job.byteSize });
    return "completed";
  }

  const partSize = job.partSize ?? settings.partSize;
  let upload: R2MultipartUpload | null = job.uploadId
    ? env.EXPORTS_BUCKET.resumeMultipartUpload(job.r2Key, job.uploadId)
    : null;
  const sink: PartSink = {
    async uploadPart(partNumber, bytes) {
      await holdLease();
      // The multipart upload is created with the first full part: a file that fits one part is a plain PUT.
      upload ??= await env.EXPORTS_BUCKET.createMultipartUpload(job.r2Key, {
        httpMetadata: { contentType: CSV_CONTENT_TYPE },
      });
      const part = await upload.uploadPart(partNumber, bytes);
      return { partNumber: part.partNumber, etag: part.etag };
    },
    checkpoint(state, previousParts) {
      return saveCheckpoint(
        db,
        { id: job.id, uploadId: upload!.uploadId, partSize },
        leaseId,
        state,
        previousParts,
        Date.now(),
        leaseUntil(),
      );
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

  const scope = { institutionId: job.institutionId, filters: job.filters, asOf: job.createdAt };
  const width = source.columns.length;
  const read = (after: RowKey | null) => readPage(db, source, scope, after, settings.pageSize);
  let next: Promise<Page> | null = read(job.cursor?.key ?? null);
  try {
    while (next) {
      const page: Page = await next;
      next = null;
      // Read the next page while this one is written and uploaded.
      if (page.count === settings.pageSize) next = read(lastKey(source, page));
      if ("rows" in page) await writer.appendPage(page.rows, width, source.key);
      else await writer.appendText(page.bytes, page.count, source.lineKey!);
      // Out of time: stop at the last part boundary (the rows after it are read again next time),
      // but only once this invocation has cut a part, so that every invocation moves the job on.
      if (next && Date.now() >= deadline && writer.partsCut > 0) {
        await writer.settle();
        return "continue";
      }
    }
  } finally {
    // A page read ahead and not used must not reject unobserved.
    (next as Promise<Page> | null)?.catch(() => undefined);
  }

  const end = await writer.finish();
  let totals: { rowCount: number; byteSize: number };
  await holdLease();
  if ("single" in end) {
    await env.EXPORTS_BUCKET.put(job.r2Key, end.single, { httpMetadata: { contentType: CSV_CONTENT_TYPE } });
    totals = { rowCount: writer.rowCount, byteSize: end.single.length };
  } else {
    totals = end.checkpoint.totals!;
    await completeUpload(
      env.EXPORTS_BUCKET,
      job.r2Key,
      upload!.uploadId,
      end.checkpoint.parts,
      totals.byteSize,
    );
  }
  await finish(env, job, leaseId, settings, totals);
  return "completed";
}

type Page = { rows: Row[]; count: number } | TextPage;

/** A page as SQLite's CSV text where the source writes it and every row of it is plain, else as rows. */
async function readPage(
  db: Database,
  source: ExportSource,
  scope: SourceScope,
  after: RowKey | null,
  limit: number,
): Promise<Page> {
  if (source.textPage) {
    const page = await source.textPage(db, scope, after, limit);
    if (page) return page;
  }
  const rows = await source.page(db, scope, after, limit);
  return { rows, count: rows.length };
}

function lastKey(source: ExportSource, page: Page): RowKey {
  if ("rows" in page) return source.key(page.rows[page.rows.length - 1]!);
  return source.lineKey!(lastLine(page.bytes));
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

async function finish(
  env: Env,
  job: ExportJob,
  leaseId: string,
  settings: ExportSettings,
  totals: { rowCount: number; byteSize: number },
): Promise<void> {
  const db = database(env.DB);
  const eventId = await markCompleted(db, job, leaseId, totals, Date.now(), settings.retentionDays);
  if (!eventId) {
    // The job was failed after this invocation's lease ran out, and the file it has just written
    // must not outlive it. A job completed by another invocation keeps its (same) file.
    if ((await findJob(db, job.id))?.status === "failed") await env.EXPORTS_BUCKET.delete(job.r2Key);
    throw new LeaseLost();
  }
  await publishEvents(env, [eventId]);
}
