import type { ExportCursor, ExportPart } from "../../db/schema";
import { toBase64, utf8 } from "../../platform/crypto/encoding";
import { csvLines } from "./csv";
import type { Row, RowKey } from "./sources";

/**
 * The resumable state of a file being written, always at a part boundary: `parts` are uploaded,
 * every row up to `cursor.key` is in them except `cursor.carry` (the tail of row `cursor.key` that
 * did not fit into the last part), and `progress` rows are complete. Nothing after the boundary is
 * kept: a resumed invocation starts the next part with the carry and re-reads the rows after the key.
 *
 * Why not end each part at a row boundary: R2 wants every part but the last of one size. Why store
 * the carry rather than regenerate the row: progress rows change in place (XP, completion), so the
 * same key read again may give other bytes, and splicing the old prefix to a new tail would corrupt
 * the row. A carry is at most one row, so it fits the job's D1 row.
 */
export interface Checkpoint {
  parts: ExportPart[];
  cursor: ExportCursor;
  progress: number;
  /** Only on the last checkpoint, once every part is uploaded. */
  totals?: { rowCount: number; byteSize: number };
}

export interface PartSink {
  /** Uploads one part; `bytes` is exactly the part size except for the last part. */
  uploadPart(partNumber: number, bytes: Uint8Array): Promise<ExportPart>;
  /**
   * Persists the state after an upload, if the job still has exactly `previousParts` parts; false
   * when it does not or is no longer this invocation's.
   */
  checkpoint(state: Checkpoint, previousParts: number): Promise<boolean>;
}

/** The job was taken over (lease expired) or finished elsewhere: stop without writing anything more. */
export class LeaseLost extends Error {
  constructor() {
    super("export job lease lost");
  }
}

/** What lies at a byte offset of an appended segment: the row whose byte is last before it, and the row's rest. */
interface Located {
  key: RowKey | null;
  rowsThrough: number;
  carry: Uint8Array;
}

type Locator = (offset: number) => Located;

const decoder = new TextDecoder();

/** The last line of UTF-8 text whose lines end in CRLF, without its CRLF. */
export function lastLine(bytes: Uint8Array): string {
  return decoder.decode(bytes.subarray(bytes.lastIndexOf(0x0a, bytes.length - 2) + 1, bytes.length - 2));
}

/** UTF-8 byte length of a string without encoding it. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (
      code >= 0xd800 &&
      code <= 0xdbff &&
      i + 1 < text.length &&
      (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00
    ) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * Turns appended CSV text into parts of exactly `partSize` bytes, uploads them one at a time while
 * the caller reads on, and checkpoints after each upload. Memory: two part-sized buffers, reused for
 * the whole invocation (the part in flight and the part being filled), whatever the row count.
 *
 * Why reuse them: a fresh 5 MiB array per part lives outside the JavaScript heap until a
 * collection frees its wrapper, and every page of every new one is faulted in (zeroed) on first
 * touch; reused, they took most of those page faults off the export's profile and about half of
 * workerd's memory growth during an export off the bench's measure.
 */
export class PartWriter {
  /** The part being filled (`filled` bytes of it), and the buffer of the part in flight. */
  private filling: Uint8Array | null = null;
  private filled = 0;
  private uploading: Uint8Array | null = null;
  /** A part-sized buffer whose upload has settled, to be filled next. */
  private spare: Uint8Array | null = null;
  /** Absolute offset of the part being filled: bytes already cut into parts. */
  private cut: number;
  /** Bytes appended so far (absolute). */
  private written: number;
  private rows: number;
  private lastKey: RowKey | null;
  private confirmed: Checkpoint;
  private inflight: Promise<void> | null = null;
  private failure: unknown = null;
  /** Parts cut by this writer (this invocation). */
  partsCut = 0;

  constructor(
    private readonly partSize: number,
    start: Checkpoint,
    private readonly sink: PartSink,
    private readonly maxParts: number,
  ) {
    this.confirmed = start;
    this.cut = start.parts.length * partSize;
    this.written = this.cut;
    this.rows = start.progress;
    this.lastKey = start.cursor.key;
  }

  /** Data rows appended so far (this invocation's and those before it). */
  get rowCount(): number {
    return this.rows;
  }

  /** Bytes cut into parts that are uploaded, or being uploaded. */
  get bytesCut(): number {
    return this.cut;
  }

  /** The header line, at the very start of a file. */
  appendHeader(text: string): Promise<void> {
    const bytes = utf8(text);
    return this.append(bytes, (offset) => ({ key: null, rowsThrough: 0, carry: bytes.subarray(offset) }));
  }

  /** The rest of the row at the checkpoint's key, first thing after resuming. */
  appendCarry(carry: Uint8Array): Promise<void> {
    const key = this.lastKey;
    const rows = this.rows;
    return this.append(carry, (offset) => ({ key, rowsThrough: rows, carry: carry.subarray(offset) }));
  }

  /** A page of rows in export order, `width` visible cells each. */
  appendPage(rows: Row[], width: number, keyOf: (row: Row) => RowKey): Promise<void> {
    const last = rows.at(-1);
    if (last === undefined) return Promise.resolve();
    const lines = csvLines(rows, width);
    const rowsBefore = this.rows;
    this.rows += rows.length;
    this.lastKey = keyOf(last);
    // Which row a part boundary falls in is only looked up when one does (about once per part):
    // walk the page's lines, resuming where the previous boundary in the same page was found.
    let index = 0;
    let position = 0;
    const locate: Locator = (offset) => {
      for (; index < lines.length; index++) {
        const line = lines[index] ?? "";
        const length = utf8Length(line);
        const row = rows[index];
        if (row !== undefined && position + length >= offset) {
          return {
            key: keyOf(row),
            rowsThrough: rowsBefore + index + 1,
            carry: utf8(line).subarray(offset - position),
          };
        }
        position += length;
      }
      throw new Error("part boundary past the end of the page");
    };
    return this.append(utf8(lines.join("")), locate);
  }

  /**
   * A page as UTF-8 CSV text (see ExportSource.text): `count` lines, each ending in CRLF, no
   * cell holding a CR or LF, so that every LF ends a row; `lineKey` gives a line's key.
   */
  appendText(bytes: Uint8Array, count: number, lineKey: (line: string) => RowKey): Promise<void> {
    if (count === 0) return Promise.resolve();
    const rowsBefore = this.rows;
    this.rows += count;
    this.lastKey = lineKey(lastLine(bytes));
    // As in appendPage: walk the lines only when a part boundary falls in this page.
    let index = 0;
    let position = 0;
    const locate: Locator = (offset) => {
      for (; position < bytes.length; index++) {
        const end = bytes.indexOf(0x0a, position) + 1;
        if (end === 0) break;
        if (end >= offset) {
          const key = lineKey(decoder.decode(bytes.subarray(position, end - 2)));
          return { key, rowsThrough: rowsBefore + index + 1, carry: bytes.subarray(offset, end) };
        }
        position = end;
      }
      throw new Error("part boundary past the end of the page");
    };
    return this.append(bytes, locate);
  }

  private async append(bytes: Uint8Array, locate: Locator): Promise<void> {
    const start = this.written;
    this.written += bytes.length;
    // Before this segment less than a part was buffered, so each boundary falls inside it.
    for (let from = 0; from < bytes.length; ) {
      this.filling ??= this.spare ?? new Uint8Array(this.partSize);
      const filling = this.filling;
      this.spare = null;
      const count = Math.min(bytes.length - from, this.partSize - this.filled);
      filling.set(bytes.subarray(from, from + count), this.filled);
      this.filled += count;
      from += count;
      if (this.filled < this.partSize) break;
      const located = locate(this.cut + this.partSize - start);
      this.filling = null;
      this.filled = 0;
      this.cut += this.partSize;
      await this.startPart(filling, {
        cursor: { key: located.key, carry: toBase64(located.carry) },
        progress: located.rowsThrough,
      });
    }
  }

  private async startPart(bytes: Uint8Array, state: Omit<Checkpoint, "parts">): Promise<void> {
    // One upload at a time: the next part waits for the previous one and its checkpoint; then the
    // previous part's buffer is free to be filled again.
    await this.settle();
    if (this.uploading?.length === this.partSize) this.spare = this.uploading;
    this.uploading = bytes;
    const partNumber = this.confirmed.parts.length + 1;
    if (partNumber > this.maxParts) {
      throw new ExportTooLarge(this.maxParts, this.partSize);
    }
    this.partsCut += 1;
    this.inflight = (async () => {
      const part = await this.sink.uploadPart(partNumber, bytes);
      const next: Checkpoint = { ...state, parts: [...this.confirmed.parts, part] };
      if (!(await this.sink.checkpoint(next, this.confirmed.parts.length))) throw new LeaseLost();
      this.confirmed = next;
    })().catch((error: unknown) => {
      this.failure = error;
    });
  }

  /** Waits for the part in flight; rethrows its failure. */
  async settle(): Promise<Checkpoint> {
    if (this.inflight) {
      await this.inflight;
      this.inflight = null;
    }
    if (this.failure !== null) throw this.failure;
    return this.confirmed;
  }

  /**
   * Uploads what is left as the last part and checkpoints the totals. `single` (no part cut yet and
   * none before) hands the whole file back instead, for one plain PUT.
   */
  async finish(): Promise<{ single: Uint8Array } | { checkpoint: Checkpoint }> {
    const confirmed = await this.settle();
    const rest = this.filling ? this.filling.subarray(0, this.filled) : new Uint8Array(0);
    const totals = { rowCount: this.rows, byteSize: this.cut + rest.length };
    const cursor = { key: this.lastKey, carry: "" };
    if (confirmed.parts.length === 0) return { single: rest };
    if (rest.length > 0) {
      this.cut += rest.length;
      await this.startPart(rest, { cursor, progress: this.rows, totals });
      return { checkpoint: await this.settle() };
    }
    const last: Checkpoint = { ...confirmed, cursor, progress: this.rows, totals };
    if (!(await this.sink.checkpoint(last, confirmed.parts.length))) throw new LeaseLost();
    this.confirmed = last;
    return { checkpoint: last };
  }
}

/** A failure that retrying cannot mend: the job fails at once with this message. */
export class ExportFailure extends Error {}

export class ExportTooLarge extends ExportFailure {
  constructor(maxParts: number, partSize: number) {
    super(
      `The export is larger than ${maxParts.toLocaleString("en-US")} parts of ${(partSize / 1048576).toFixed(0)} MiB; narrow it with from/to, course_id or user_ids.`,
    );
  }
}
