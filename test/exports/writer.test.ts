import { describe, expect, it } from "vitest";
import { csvHeader, csvRows } from "../../src/domains/exports/csv";
import type { Row, RowKey } from "../../src/domains/exports/sources";
import { type Checkpoint, type PartSink, PartWriter, utf8Length } from "../../src/domains/exports/writer";
import { fromBase64, utf8 } from "../../src/platform/crypto/encoding";

// Pure tests of the part-boundary scheme with parts far smaller than R2 allows (R2 and its local
// simulator refuse parts under 5 MiB; the end-to-end tests in generation.test.ts use real 5 MiB parts).

const WIDTH = 3;
const HEADER = csvHeader(["n", "text", "score"]);
const keyOf = (row: Row): RowKey => [row[3] as number];
const lineKey = (line: string): RowKey => [Number(line.slice(0, line.indexOf(",")))];

/** Rows whose CSV text has multi-byte characters, quotes, commas and newlines, of varied length. */
function makeRows(count: number): Row[] {
  const texts = [
    "plain",
    "é",
    "€ sign",
    "𝄞 clef",
    'quote "q"',
    "comma, here",
    "line\nbreak",
    "=formula",
    "",
    "ü".repeat(40),
  ];
  return Array.from({ length: count }, (_, i) => [
    i,
    `${texts[i % texts.length]}${i % 7 === 0 ? " tail" : ""}`,
    i % 3 === 0 ? -i / 8 : i,
    i,
  ]);
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** R2's multipart rules in memory: parts by number (a re-upload replaces), all but the last of one size. */
class MemoryUpload implements PartSink {
  parts = new Map<number, Uint8Array>();
  checkpoints: Checkpoint[] = [];
  persisted: Checkpoint;
  constructor(start: Checkpoint) {
    this.persisted = start;
  }
  async uploadPart(partNumber: number, bytes: Uint8Array) {
    this.parts.set(partNumber, bytes.slice());
    return { partNumber, etag: `etag-${partNumber}-${bytes.length}` };
  }
  async checkpoint(state: Checkpoint, previousParts: number) {
    if (this.persisted.parts.length !== previousParts) return false;
    this.persisted = state;
    this.checkpoints.push(state);
    return true;
  }
  file(partSize: number, numbers: number[]): Uint8Array {
    numbers.forEach((n, i) => {
      if (i < numbers.length - 1) expect(this.parts.get(n)!.length, `part ${n}`).toBe(partSize);
      else expect(this.parts.get(n)!.length).toBeLessThanOrEqual(partSize);
    });
    return concat(numbers.map((n) => this.parts.get(n)!));
  }
}

const FRESH: Checkpoint = { parts: [], cursor: { key: null, carry: "" }, progress: 0 };

/** Writes `rows` from `start` (a checkpoint of an earlier run, or FRESH) in pages, as generate() does. */
async function run(
  sink: MemoryUpload,
  partSize: number,
  rows: Row[],
  start: Checkpoint,
  pageSize: number,
  options: { stopAfterParts?: number; textPages?: boolean } = {},
) {
  const writer = new PartWriter(partSize, start, sink, 10_000);
  if (start === FRESH) await writer.appendHeader(HEADER);
  else if (start.cursor.carry) await writer.appendCarry(fromBase64(start.cursor.carry));
  const from = start.progress;
  let pages = 0;
  for (let i = from; i < rows.length; i += pageSize) {
    const page = rows.slice(i, i + pageSize);
    // Every other page as text (sources' textPage), the rest as rows.
    if (options.textPages && pages++ % 2 === 0)
      await writer.appendText(utf8(csvRows(page, WIDTH)), page.length, lineKey);
    else await writer.appendPage(page, WIDTH, keyOf);
    if (options.stopAfterParts !== undefined && writer.partsCut >= options.stopAfterParts)
      return { stopped: await writer.settle() };
  }
  return { end: await writer.finish() };
}

function expectedFile(rows: Row[]): Uint8Array {
  return utf8(HEADER + csvRows(rows, WIDTH));
}

describe("PartWriter", () => {
  it("cuts parts of exactly the part size, the last one shorter, that concatenate to the whole file", async () => {
    for (const partSize of [1, 7, 64, 1000]) {
      const rows = makeRows(150);
      const sink = new MemoryUpload(FRESH);
      const { end } = await run(sink, partSize, rows, FRESH, 11);
      expect(end && "checkpoint" in end).toBe(true);
      const last = (end as { checkpoint: Checkpoint }).checkpoint;
      const numbers = last.parts.map((p) => p.partNumber);
      expect(numbers).toEqual(numbers.map((_, i) => i + 1));
      expect(sink.file(partSize, numbers)).toEqual(expectedFile(rows));
      expect(last.totals).toEqual({ rowCount: 150, byteSize: expectedFile(rows).length });
    }
  });

  it("checkpoints hold exactly the rows up to the cursor: uploaded parts plus the carry", async () => {
    const rows = makeRows(60);
    const sink = new MemoryUpload(FRESH);
    await run(sink, 37, rows, FRESH, 5);
    expect(sink.checkpoints.length).toBeGreaterThan(10);
    const text = (n: number) => utf8(HEADER + csvRows(rows.slice(0, n), WIDTH));
    for (const cp of sink.checkpoints.filter((c) => !c.totals)) {
      const uploaded = concat(cp.parts.map((p) => sink.parts.get(p.partNumber)!));
      const carry = fromBase64(cp.cursor.carry);
      expect(concat([uploaded, carry])).toEqual(text(cp.progress));
      // The cursor names the last row the checkpoint covers; the carry is never a whole part.
      expect(cp.cursor.key).toEqual(cp.progress === 0 ? null : [cp.progress - 1]);
      expect(carry.length).toBeLessThan(
        utf8Length(csvRows([rows[Math.max(0, cp.progress - 1)]!], WIDTH)) + HEADER.length + 1,
      );
    }
  });

  it("resumed from any checkpoint, with the rest re-read, yields the same file: no row lost or doubled", async () => {
    const rows = makeRows(80);
    const partSize = 23;
    const reference = new MemoryUpload(FRESH);
    await run(reference, partSize, rows, FRESH, 6);
    const checkpoints = reference.checkpoints.filter((c) => !c.totals);
    for (const cp of checkpoints) {
      // A crash after checkpoint `cp`: the parts up to it are in the upload, anything later is lost;
      // a later part may even have been uploaded before the crash (a re-upload replaces it).
      const sink = new MemoryUpload(cp);
      for (const p of cp.parts) sink.parts.set(p.partNumber, reference.parts.get(p.partNumber)!);
      sink.parts.set(cp.parts.length + 1, utf8("garbage from the crashed attempt"));
      const { end } = await run(sink, partSize, rows, cp, 4);
      const last = (end as { checkpoint: Checkpoint }).checkpoint;
      expect(
        sink.file(
          partSize,
          last.parts.map((p) => p.partNumber),
        ),
      ).toEqual(expectedFile(rows));
      expect(last.totals!.rowCount).toBe(80);
    }
  });

  it("stops at a part boundary and continues across several invocations", async () => {
    const rows = makeRows(120);
    const partSize = 50;
    const sink = new MemoryUpload(FRESH);
    let state = FRESH;
    let invocations = 0;
    for (;;) {
      invocations += 1;
      const result = await run(sink, partSize, rows, state, 9, { stopAfterParts: 2 });
      if (result.end) {
        const last = (result.end as { checkpoint: Checkpoint }).checkpoint;
        expect(
          sink.file(
            partSize,
            last.parts.map((p) => p.partNumber),
          ),
        ).toEqual(expectedFile(rows));
        break;
      }
      state = result.stopped!;
    }
    expect(invocations).toBeGreaterThan(5);
  });

  it("hands a file that fits one part back whole, for a plain PUT", async () => {
    const rows = makeRows(3);
    const sink = new MemoryUpload(FRESH);
    const { end } = await run(sink, 1_000_000, rows, FRESH, 2);
    expect(end).toEqual({ single: expectedFile(rows) });
    expect(sink.parts.size).toBe(0);
    const empty = await run(new MemoryUpload(FRESH), 1_000_000, [], FRESH, 2);
    expect(empty.end).toEqual({ single: utf8(HEADER) });
  });

  it("stops when a checkpoint is refused (the job is no longer this invocation's)", async () => {
    const sink = new MemoryUpload(FRESH);
    sink.checkpoint = async () => false;
    await expect(run(sink, 16, makeRows(20), FRESH, 5)).rejects.toThrow("lease lost");
  });

  it("cuts, checkpoints and resumes the same way when pages come as text (no line breaks in cells)", async () => {
    const rows = makeRows(90).filter((row) => !/[\r\n]/.test(String(row[1])));
    const reference = new MemoryUpload(FRESH);
    const partSize = 29;
    const { end } = await run(reference, partSize, rows, FRESH, 7, { textPages: true });
    const last = (end as { checkpoint: Checkpoint }).checkpoint;
    expect(
      reference.file(
        partSize,
        last.parts.map((p) => p.partNumber),
      ),
    ).toEqual(expectedFile(rows));
    expect(last.totals).toEqual({ rowCount: rows.length, byteSize: expectedFile(rows).length });
    const checkpoints = reference.checkpoints.filter((c) => !c.totals);
    expect(checkpoints.length).toBeGreaterThan(10);
    for (const cp of checkpoints) {
      // Uploaded parts plus the carry are exactly the rows up to the cursor, whose key names the last of them.
      const uploaded = concat(cp.parts.map((p) => reference.parts.get(p.partNumber)!));
      expect(concat([uploaded, fromBase64(cp.cursor.carry)])).toEqual(
        utf8(HEADER + csvRows(rows.slice(0, cp.progress), WIDTH)),
      );
      expect(cp.cursor.key).toEqual(cp.progress === 0 ? null : [rows[cp.progress - 1]![3]]);
      // Resumed from it, with the rest re-read (pages aligned differently), the file is the same.
      const sink = new MemoryUpload(cp);
      for (const p of cp.parts) sink.parts.set(p.partNumber, reference.parts.get(p.partNumber)!);
      const resumed = await run(sink, partSize, rows, cp, 5, { textPages: true });
      const done = (resumed.end as { checkpoint: Checkpoint }).checkpoint;
      expect(
        sink.file(
          partSize,
          done.parts.map((p) => p.partNumber),
        ),
      ).toEqual(expectedFile(rows));
    }
  });

  it("counts UTF-8 bytes like TextEncoder", () => {
    for (const s of ["", "abc", "é", "€", "𝄞", "a\ud800b", "\udc00", "mixé€𝄞"])
      expect(utf8Length(s)).toBe(utf8(s).length);
  });
});
