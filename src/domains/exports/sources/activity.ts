import { utf8 } from "../../../platform/crypto/encoding";
import type { ServiceContext } from "../../../platform/service/context";
import type { AttemptRow } from "../../progress/cold-tier/format";
import { type ColdScope, coldPage, hasColdRows, mergeTiers } from "../../progress/cold-tier/read";
import { plainLines } from "../csv";
import {
  type ActivityRow,
  type ActivityTextPageRow,
  activityRowsPageSql,
  activityTextPageSql,
  roundedScoresSql,
} from "../sql";
import { type ExportSource, keyBy, type RowKey, type SourceScope, type TextPage } from "./source";

export const activity: ExportSource = {
  type: "activity",
  summary: "one row per recorded training-item attempt",
  rangeColumn: "occurred_at",
  order: "by `occurred_at`, then `attempt_id`",
  columns: [
    { name: "attempt_id", description: "The attempt's id (the client's UUID)." },
    { name: "occurred_at", description: "When the learner made the attempt." },
    { name: "user_id", description: "The learner." },
    { name: "course_id", description: "Course of the item." },
    { name: "lesson_id", description: "Lesson of the item." },
    { name: "training_item_id", description: "The training item." },
    { name: "skill", description: "The item's skill." },
    { name: "cefr_level", description: "The item's CEFR level." },
    { name: "score", description: "0–1, three decimals." },
    { name: "correct", description: "`true` or `false`." },
    { name: "duration_seconds", description: "Time spent on the item." },
    { name: "xp_awarded", description: "XP the attempt earned." },
    { name: "recorded_at", description: "When the API recorded it." },
  ],
  page: activityPage,
  key: (row) => activityKey(row),
  text: { page: activityTextPage, lineKey: activityLineKey },
};

/**
 * The activity page as rows: the attempts in D1 and those moved to the cold tier (R2), merged in the
 * export's order, so that the file is the same before and after attempts are archived.
 */
async function activityPage(
  ctx: ServiceContext,
  scope: SourceScope,
  after: RowKey | null,
  limit: number,
): Promise<ActivityRow[]> {
  const [hot, archived] = await Promise.all([
    ctx.db.values<ActivityRow>(activityRowsPageSql(scope, after, limit)),
    coldPage(ctx, coldScope(scope), position(after), limit),
  ]);
  if (archived.length === 0) return hot;
  const cold = await activityRows(ctx, archived);
  return mergeTiers(hot, cold, limit, (row) => ({ occurredAt: row[1], id: row[0] }));
}

/** The job's scope as the cold tier reads it: the same conditions as `activityRowsPageSql`'s. */
function coldScope(scope: SourceScope): ColdScope {
  const { filters, asOf } = scope;
  const members = filters.user_ids?.length ? new Set(filters.user_ids) : null;
  return {
    institutionId: scope.institutionId,
    fromDay: filters.from ? filters.from.slice(0, 10) : null,
    toDay: filters.to ? filters.to.slice(0, 10) : null,
    keep: (a) =>
      a.recordedAt <= asOf &&
      (!filters.from || a.occurredAt >= filters.from) &&
      (!filters.to || a.occurredAt < filters.to) &&
      (!filters.course_id || a.courseId === filters.course_id) &&
      (!members || members.has(a.userId)),
  };
}

function position(after: RowKey | null) {
  return after ? { occurredAt: String(after[0]), id: String(after[1]) } : null;
}

/** Archived attempts as the export's cells, the score rounded by SQLite as the D1 page rounds it. */
async function activityRows(ctx: ServiceContext, rows: readonly AttemptRow[]): Promise<ActivityRow[]> {
  const scores = [...new Set(rows.map((a) => a.score))];
  const rounded = new Map(await ctx.db.values<[number, number]>(roundedScoresSql(scores)));
  const score = (value: number) => {
    const r = rounded.get(value);
    if (r === undefined) throw new Error(`no rounding for the archived score ${value}`);
    return r;
  };
  return rows.map((a) => [
    a.id,
    a.occurredAt,
    a.userId,
    a.courseId,
    a.lessonId,
    a.trainingItemId,
    a.skill,
    a.cefrLevel,
    score(a.score),
    a.correct ? "true" : "false",
    a.durationSeconds,
    a.xpAwarded,
    a.recordedAt,
  ]);
}

/** The activity page as CSV text written by SQLite (sql.ts, activityTextPageSql), or null when it is not plain. */
async function activityTextPage(
  ctx: ServiceContext,
  scope: SourceScope,
  after: RowKey | null,
  limit: number,
): Promise<TextPage | null> {
  // Where archived files may hold rows of this page, it is read as rows, from both tiers.
  if (await hasColdRows(ctx, coldScope(scope), position(after))) return null;
  const result = await ctx.db.get<ActivityTextPageRow>(activityTextPageSql(scope, after, limit));
  const { count, types_ok: typesOk, text } = result;
  if (count === 0) return { bytes: new Uint8Array(0), count: 0 };
  if (typesOk !== 1 || text === null) return null;
  // SQLite appends the last CRLF: `${text}\r\n` here would copy the whole page into a new string.
  const bytes = utf8(text);
  return plainLines(bytes, count, ACTIVITY_COLUMN_COUNT) && inKeyOrder(bytes) ? { bytes, count } : null;
}

function activityLineKey(line: string): RowKey {
  // The line's first two cells: attempt_id, occurred_at (plain cells: no quotes, no commas).
  const idEnd = line.indexOf(",");
  const atEnd = line.indexOf(",", idEnd + 1);
  if (idEnd < 0 || atEnd < 0) throw new Error("an activity line without its key cells");
  return [line.slice(idEnd + 1, atEnd), line.slice(0, idEnd)];
}

/** Lines of the text page: the columns of `activity` (csv.ts checks each line has them all). */
const ACTIVITY_COLUMN_COUNT = activity.columns.length;
const activityKey = keyBy(activity.columns, ["occurred_at", "attempt_id"]);

/**
 * Whether plain activity lines are in export order, (occurred_at, id) ascending, compared as SQLite
 * compares text (bytes). SQLite concatenates the rows in the order the page's subquery yields them,
 * which is that order, but only an ORDER BY inside group_concat would promise it — and sorting the
 * page again costs about 0.6 s per million rows here — so the order is checked instead (a page out
 * of order is read as rows). The first cell is the id, the second occurred_at.
 */
export function inKeyOrder(bytes: Uint8Array): boolean {
  let previous = -1; // start of the previous line
  let previousIdEnd = 0;
  let previousAtEnd = 0;
  for (let start = 0; start < bytes.length; ) {
    const idEnd = bytes.indexOf(0x2c, start);
    const atEnd = bytes.indexOf(0x2c, idEnd + 1);
    if (idEnd < 0 || atEnd < 0) return false;
    if (previous >= 0) {
      let order = compareBytes(bytes, previousIdEnd + 1, previousAtEnd, idEnd + 1, atEnd);
      if (order === 0) order = compareBytes(bytes, previous, previousIdEnd, start, idEnd);
      if (order >= 0) return false;
    }
    previous = start;
    previousIdEnd = idEnd;
    previousAtEnd = atEnd;
    start = bytes.indexOf(0x0a, atEnd) + 1;
    if (start === 0) return false;
  }
  return true;
}

function compareBytes(bytes: Uint8Array, a: number, aEnd: number, b: number, bEnd: number): number {
  for (; a < aEnd && b < bEnd; a++, b++) {
    const d = (bytes[a] ?? 0) - (bytes[b] ?? 0);
    if (d !== 0) return d;
  }
  return aEnd - a - (bEnd - b);
}
