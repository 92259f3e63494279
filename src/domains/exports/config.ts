import type { Env } from "../../env";

export interface ExportSettings {
  /** Bytes of every multipart part but the last. R2 wants at least 5 MiB and all of them equal. */
  partSize: number;
  /** Rows per keyset page read from D1. */
  pageSize: number;
  /** How long one queue invocation generates before it hands over to a continuation message. */
  timeBudgetMs: number;
  retentionDays: number;
}

/** R2 refuses a multipart upload with more parts. */
export const MAX_PARTS = 10_000;
/** R2 refuses to complete a multipart upload with a part but the last smaller than this. */
export const MIN_PART_BYTES = 5 * 1024 * 1024;

function positiveInteger(name: string, raw: string | undefined): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return value;
}

/**
 * The EXPORT_* variables of wrangler.toml (the tests override some in vitest.config.ts). A value R2
 * or the generator cannot work with throws: creating an export reads them first, so a misconfigured
 * deployment refuses jobs (500) instead of queueing ones that can only fail.
 */
export function exportSettings(env: Env): ExportSettings {
  const partSize = positiveInteger("EXPORT_PART_SIZE_BYTES", env.EXPORT_PART_SIZE_BYTES);
  if (partSize < MIN_PART_BYTES)
    throw new Error(
      `EXPORT_PART_SIZE_BYTES must be at least ${MIN_PART_BYTES} (R2's smallest part), got ${partSize}`,
    );
  return {
    partSize,
    pageSize: positiveInteger("EXPORT_PAGE_SIZE", env.EXPORT_PAGE_SIZE),
    timeBudgetMs: positiveInteger("EXPORT_TIME_BUDGET_MS", env.EXPORT_TIME_BUDGET_MS),
    retentionDays: positiveInteger("EXPORT_RETENTION_DAYS", env.EXPORT_RETENTION_DAYS),
  };
}
