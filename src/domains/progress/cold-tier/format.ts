import type { attempts } from "../../../db/schema";
import { toHex, utf8 } from "../../../platform/crypto/encoding";

/**
 * The cold tier's file format (docs/design/cold-tier.md): NDJSON, one attempt per line with the
 * attempts table's columns under their snake_case names, in (occurred_at, id) order, gzip-compressed.
 * The schema version is in the key (`attempts/v1/…`) and in the object's custom metadata.
 */

export type AttemptRow = typeof attempts.$inferSelect;

export const SCHEMA_VERSION = 1;
const KEY_PREFIX = `attempts/v${SCHEMA_VERSION}`;
export const CONTENT_TYPE = "application/x-ndjson";
export const CONTENT_ENCODING = "gzip";

/** `attempts/v1/<institution>/<yyyy>/<mm>/<dd>.ndjson.gz`, then `<dd>.part-<n>.ndjson.gz` for part n ≥ 2. */
export function objectKey(institutionId: string, day: string, part: number): string {
  const [year, month, date] = day.split("-");
  const name = part === 1 ? `${date}.ndjson.gz` : `${date}.part-${part}.ndjson.gz`;
  return `${KEY_PREFIX}/${encodeURIComponent(institutionId)}/${year}/${month}/${name}`;
}

/** One line (without its LF): every column, always in this order, so equal rows give equal bytes. */
function line(row: AttemptRow): string {
  return JSON.stringify({
    id: row.id,
    user_id: row.userId,
    institution_id: row.institutionId,
    training_item_id: row.trainingItemId,
    lesson_id: row.lessonId,
    course_id: row.courseId,
    skill: row.skill,
    cefr_level: row.cefrLevel,
    score: row.score,
    correct: row.correct,
    duration_seconds: row.durationSeconds,
    occurred_at: row.occurredAt,
    local_day: row.localDay,
    xp_awarded: row.xpAwarded,
    recorded_at: row.recordedAt,
  });
}

type Line = Record<string, unknown>;

function text(value: unknown, name: string): string {
  if (typeof value !== "string") throw new Error(`an archived attempt without ${name}`);
  return value;
}

function num(value: unknown, name: string): number {
  if (typeof value !== "number") throw new Error(`an archived attempt without ${name}`);
  return value;
}

function fromLine(json: string): AttemptRow {
  const l = JSON.parse(json) as Line;
  return {
    id: text(l.id, "id"),
    userId: text(l.user_id, "user_id"),
    institutionId: l.institution_id === null ? null : text(l.institution_id, "institution_id"),
    trainingItemId: text(l.training_item_id, "training_item_id"),
    lessonId: text(l.lesson_id, "lesson_id"),
    courseId: text(l.course_id, "course_id"),
    skill: text(l.skill, "skill") as AttemptRow["skill"],
    cefrLevel: text(l.cefr_level, "cefr_level") as AttemptRow["cefrLevel"],
    score: num(l.score, "score"),
    correct: l.correct === true,
    durationSeconds: num(l.duration_seconds, "duration_seconds"),
    occurredAt: text(l.occurred_at, "occurred_at"),
    localDay: text(l.local_day, "local_day"),
    xpAwarded: num(l.xp_awarded, "xp_awarded"),
    recordedAt: text(l.recorded_at, "recorded_at"),
  };
}

/** The uncompressed file: a line per row, each ending in LF. */
export function ndjson(rows: readonly AttemptRow[]): Uint8Array {
  return utf8(rows.map((row) => `${line(row)}\n`).join(""));
}

export function parseNdjson(bytes: Uint8Array): AttemptRow[] {
  const lines = new TextDecoder().decode(bytes).split("\n");
  if (lines.pop() !== "") throw new Error("an archived file that does not end in a line break");
  return lines.map(fromLine);
}

export async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

export async function gunzip(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(
    await new Response(stream.pipeThrough(new DecompressionStream("gzip"))).arrayBuffer(),
  );
}

export async function sha256(bytes: Uint8Array): Promise<string> {
  return toHex(await crypto.subtle.digest("SHA-256", bytes));
}

/** (occurred_at, id) order, compared as SQLite compares text (the ids and timestamps are ASCII). */
export function compareKeys(
  a: { occurredAt: string; id: string },
  b: { occurredAt: string; id: string },
): number {
  if (a.occurredAt !== b.occurredAt) return a.occurredAt < b.occurredAt ? -1 : 1;
  if (a.id === b.id) return 0;
  return a.id < b.id ? -1 : 1;
}
