import type { z } from "@hono/zod-openapi";
import { CsvError, parse } from "csv-parse/sync";
import { validationError } from "../../../platform/errors";
import {
  externalId,
  groupName,
  isSafeForDisplay,
  personName,
  UNSAFE_TEXT_MESSAGE,
} from "../../../platform/text";
import type { MemberRole } from "../policy";
import { MAX_GROUPS } from "../schemas";

export const MAX_DATA_ROWS = 50_000;
export const MAX_RECORD_CHARS = 65_536;

/** One data row of an upload, read and checked on its own (nothing here looks at the database). */
export interface CsvRow {
  /** 1-based line of the file where the row starts. */
  line: number;
  cells: string[];
  email: string | null;
  /** Null: the file gives no name for this row (a new member is then named after its e-mail). */
  name: string | null;
  /** Null: no role given (new members are learners, existing ones keep theirs). */
  role: MemberRole | null;
  externalId: string | null;
  /** Null: the file has no groups column (groups stay as they are); [] clears them. */
  groups: string[] | null;
  /** OneRoster's enabledUser: false suspends, true re-activates; null leaves the status alone. */
  enabled: boolean | null;
  errors: string[];
}

export interface ParsedCsv {
  header: string[];
  format: "lingua" | "oneroster";
  rows: CsvRow[];
}

const ROLE_WORDS: Record<string, MemberRole> = {
  learner: "learner",
  student: "learner",
  instructor: "instructor",
  teacher: "instructor",
  institution_admin: "institution_admin",
  administrator: "institution_admin",
  admin: "institution_admin",
};

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

// The members API's own rules for these cells, so that a file accepts exactly what a request does.
const NAME = personName();
const GROUP = groupName();
const EXTERNAL_ID = externalId();

/** Why `schema` refuses the cell (its first reason), or null. */
function refusal(schema: z.ZodType, value: string): string | null {
  const result = schema.safeParse(value);
  return result.success ? null : (result.error.issues[0]?.message ?? "is not valid");
}

function fileError(message: string) {
  return validationError([{ path: "file", message }]);
}

/** The bytes as UTF-8 text (a byte-order mark dropped), or 422. */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw fileError("is not UTF-8 text; save the file as CSV UTF-8");
  }
}

type Columns = Record<
  "email" | "name" | "first" | "last" | "role" | "external" | "groups" | "enabled",
  number | undefined
>;

function columnsOf(header: string[]): { columns: Columns; format: ParsedCsv["format"] } {
  const index = (...names: string[]) => {
    const i = header.findIndex((h) => names.includes(h.trim().toLowerCase()));
    return i === -1 ? undefined : i;
  };
  const format =
    index("sourcedid") !== undefined && index("givenname", "familyname") !== undefined
      ? "oneroster"
      : "lingua";
  return {
    format,
    columns: {
      email: index("email"),
      name: index("name"),
      first: index("first_name", "givenname"),
      last: index("last_name", "familyname"),
      role: index("role"),
      external: index("external_id", "sourcedid"),
      groups: index("groups"),
      enabled: index("enableduser"),
    },
  };
}

/**
 * The 1-based line of the file each offset starts on, as an editor shows it: CR LF, a lone LF and a
 * lone CR each end a line (csv-parse's own count, `info.lines`, counts the CR and the LF of a CR LF
 * inside a quoted cell as two lines). `offsets` ascend; a cursor walks the bytes once.
 */
function linesAt(bytes: Uint8Array, offsets: readonly number[]): number[] {
  const lines: number[] = [];
  let line = 1;
  let at = 0;
  for (const offset of offsets) {
    for (; at < offset && at < bytes.length; at++) {
      const byte = bytes[at];
      if (byte === LF || (byte === CR && bytes[at + 1] !== LF)) line += 1;
    }
    lines.push(line);
  }
  return lines;
}

const CR = 0x0d;
const LF = 0x0a;

/** csv-parse's message, its "at line N" counted as linesAt counts (from where the parser stopped). */
function onEditorLine(error: CsvError, text: string): string {
  const at = (error as CsvError & { bytes?: unknown }).bytes;
  if (typeof at !== "number") return error.message;
  const [line] = linesAt(new TextEncoder().encode(text), [at]);
  return error.message.replace(/\bat line \d+/, `at line ${line}`);
}

/** A record with nothing but blanks: an empty line, or a row of empty cells (skipped, not rejected). */
function isBlank(record: string[]): boolean {
  return record.every((cell) => cell.trim() === "");
}

function readRow(cells: string[], line: number, columns: Columns): CsvRow {
  const cell = (i: number | undefined) => (i === undefined ? "" : (cells[i] ?? "").trim());
  const errors: string[] = [];
  const rawEmail = cell(columns.email).toLowerCase();
  const email: string | null = rawEmail || null;
  if (!email) errors.push("email: is missing");
  else if (!isSafeForDisplay(email)) errors.push(`email: ${UNSAFE_TEXT_MESSAGE}`);
  else if (email.length > 254 || !EMAIL.test(email)) {
    errors.push(`email: "${rawEmail}" is not an e-mail address`);
  }

  const joined = [cell(columns.first), cell(columns.last)].filter(Boolean).join(" ");
  const name = cell(columns.name) || joined || null;
  const nameRefused = name && refusal(NAME, name);
  if (nameRefused) errors.push(`name: ${nameRefused}`);

  const roleText = cell(columns.role);
  let role: MemberRole | null = null;
  if (roleText) {
    role = ROLE_WORDS[roleText.toLowerCase()] ?? null;
    if (!role) errors.push(`role: "${roleText}" is not a role; use learner, instructor or institution_admin`);
  }

  const externalId = cell(columns.external) || null;
  const externalIdRefused = externalId && refusal(EXTERNAL_ID, externalId);
  if (externalIdRefused) errors.push(`external_id: ${externalIdRefused}`);

  let groups: string[] | null = null;
  if (columns.groups !== undefined) {
    groups = [
      ...new Set(
        cell(columns.groups)
          .split(";")
          .map((g) => g.trim())
          .filter(Boolean),
      ),
    ].sort();
    const groupRefused = groups.map((g) => refusal(GROUP, g)).find(Boolean);
    if (groupRefused) errors.push(`groups: a group name ${groupRefused}`);
    if (groups.length > MAX_GROUPS) errors.push(`groups: more than ${MAX_GROUPS} groups`);
  }

  const enabledText = cell(columns.enabled).toLowerCase();
  let enabled: boolean | null = null;
  if (enabledText) {
    if (["true", "yes", "1"].includes(enabledText)) enabled = true;
    else if (["false", "no", "0"].includes(enabledText)) enabled = false;
    else errors.push(`enabledUser: "${enabledText}" is neither true nor false`);
  }
  return { line, cells, email, name, role, externalId, groups, enabled, errors };
}

/** A later row with an e-mail or external_id an earlier row has is rejected, naming the earlier line. */
function rejectRepeats(rows: CsvRow[]): void {
  const emails = new Map<string, number>();
  const externalIds = new Map<string, number>();
  for (const row of rows) {
    if (row.email) {
      const first = emails.get(row.email);
      if (first !== undefined) row.errors.push(`email: repeats line ${first}`);
      else emails.set(row.email, row.line);
    }
    if (row.externalId) {
      const first = externalIds.get(row.externalId);
      if (first !== undefined) row.errors.push(`external_id: repeats line ${first}`);
      else externalIds.set(row.externalId, row.line);
    }
  }
}

/**
 * Parses an upload: columns by header name in any order and any case, or a OneRoster 1.1 users.csv.
 * Whole-file problems (not UTF-8, empty, no `email` column, too many rows, broken quoting) are 422;
 * a bad row only rejects that row.
 */
export function parseMemberCsv(bytes: Uint8Array): ParsedCsv {
  const text = decodeUtf8(bytes);
  if (text.trim() === "") throw fileError("is empty");
  let parsed: { record: string[]; info: { bytes: number } }[];
  try {
    parsed = parse(text, {
      bom: true,
      info: true,
      relax_column_count: true,
      // A member's row is a few hundred characters; one this long is not a member (and a report row
      // must stay far below D1's 2 MB per value).
      max_record_size: MAX_RECORD_CHARS,
    }) as unknown as { record: string[]; info: { bytes: number } }[];
  } catch (error) {
    if (error instanceof CsvError) throw fileError(`is not valid CSV: ${onEditorLine(error, text)}`);
    throw error;
  }
  // Where each record starts: where the one before it ended (`info.bytes`, its line end included).
  // Empty lines and rows of empty cells are records too here, so that none is taken for the start
  // of the next; they are dropped after.
  const starts = parsed.map((_, i) => (i === 0 ? 0 : (parsed[i - 1]?.info.bytes ?? 0)));
  // csv-parse counts the bytes of the text as UTF-8 (the byte-order mark is gone from the text).
  const lines = linesAt(new TextEncoder().encode(text), starts);
  const records = parsed
    .map(({ record }, i) => ({ record, line: lines[i] ?? 1 }))
    .filter(({ record }) => !isBlank(record));
  const [first, ...data] = records;
  if (!first) throw fileError("is empty");
  const header = first.record.map((h) => h.trim());
  if (columnsOf(header).columns.email === undefined) {
    throw fileError(`has no \`email\` column (the header row reads: ${header.join(", ")})`);
  }
  if (data.length === 0) throw fileError("has a header row but no data rows");
  if (data.length > MAX_DATA_ROWS) {
    throw fileError(`has ${data.length} data rows; at most ${MAX_DATA_ROWS} are accepted per upload`);
  }
  return checkRows(
    header,
    data.map(({ record, line }): StoredRecord => [line, record]),
  );
}

/** A data row as read from the file: the line it starts on, and its cells. */
export type StoredRecord = [line: number, cells: string[]];

/** Each row read and checked on its own, then repeats rejected: the same for a file and a stored upload. */
export function checkRows(header: string[], records: readonly StoredRecord[]): ParsedCsv {
  const { columns, format } = columnsOf(header);
  const rows = records.map(([line, cells]) => readRow(cells, line, columns));
  rejectRepeats(rows);
  return { header, format, rows };
}
