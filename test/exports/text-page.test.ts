import { env } from "cloudflare:test";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { attempts as attemptsTable } from "../../src/db/schema";
import { csvRows } from "../../src/domains/exports/csv";
import { inKeyOrder, type RowKey, SOURCES, type SourceScope } from "../../src/domains/exports/sources";
import { utf8 } from "../../src/platform/crypto/encoding";
import { database } from "../../src/platform/db";
import { testContext } from "../helpers/context";

// The activity export's pages written by SQLite (sources/activity.ts, text.page) against the same pages read as
// rows and written by csv.ts: wherever the SQL path answers, its bytes must be exactly the library
// path's; wherever a row needs quoting, the guard or a number SQLite would print otherwise, it must
// step aside (null) so that the page is read as rows.

const activity = SOURCES.activity;
const WIDTH = activity.columns.length;
const decoder = new TextDecoder();
let seq = 0;

type Attempt = Partial<
  Record<
    | "id"
    | "user_id"
    | "training_item_id"
    | "lesson_id"
    | "course_id"
    | "skill"
    | "cefr_level"
    | "occurred_at"
    | "recorded_at",
    unknown
  >
> & {
  score?: unknown;
  correct?: unknown;
  duration_seconds?: unknown;
  xp_awarded?: unknown;
};

/** A value bound to SQLite as it is, past drizzle's column modes (which would convert or refuse it). */
const cell = (value: unknown) => sql`${value}`;

/**
 * Inserts attempts into a fresh institution; returns its scope. Columns not given are plain. Each
 * value is bound as it is: the cells may be of any SQLite type (a blob, an integer where text belongs),
 * and the text page must notice them.
 */
async function institutionWith(attempts: Attempt[]): Promise<SourceScope> {
  const institutionId = `ins_text_${++seq}_${crypto.randomUUID()}`;
  const base = Date.parse("2026-11-01T00:00:00Z");
  const db = database(env.DB);
  const statements = attempts.map((a, i) =>
    db.insert(attemptsTable).values({
      id: cell(a.id ?? `${String(i).padStart(8, "0")}-0000-4000-8000-${crypto.randomUUID().slice(-12)}`),
      userId: cell(a.user_id ?? "usr_01JTEXT0000000000000000000"),
      institutionId,
      trainingItemId: cell(a.training_item_id ?? `itm_${i % 7}`),
      lessonId: cell(a.lesson_id ?? "les_é€𝄞"),
      courseId: cell(a.course_id ?? "crs_1"),
      skill: cell(a.skill ?? "reading"),
      cefrLevel: cell(a.cefr_level ?? "B1"),
      score: cell(a.score ?? 0.5),
      correct: cell(a.correct ?? i % 2),
      durationSeconds: cell(a.duration_seconds ?? i % 300),
      occurredAt: cell(
        a.occurred_at ?? new Date(base + Math.floor(i / 3) * 1000).toISOString().replace(".000", ""),
      ),
      localDay: "2026-11-01",
      xpAwarded: cell(a.xp_awarded ?? i % 20),
      recordedAt: cell(a.recorded_at ?? "2026-11-01T00:00:00Z"),
    }),
  );
  for (let i = 0; i < statements.length; i += 50) {
    const [first, ...rest] = statements.slice(i, i + 50);
    await db.batch([first!, ...rest]);
  }
  return { institutionId, filters: {}, asOf: "2026-12-01T00:00:00Z" };
}

/**
 * Walks the whole export in pages of `limit`, comparing each page's SQL text (where it answers) with
 * the library's text of the same rows; returns how many pages each path wrote and the whole file.
 */
async function walk(scope: SourceScope, limit: number) {
  const ctx = testContext();
  let after: RowKey | null = null;
  let text = 0;
  let rows = 0;
  let file = "";
  for (;;) {
    const page = await activity.page(ctx, scope, after, limit);
    const sqlPage = await activity.text!.page(ctx, scope, after, limit);
    const expected = csvRows(page, WIDTH);
    if (sqlPage && sqlPage.count > 0) {
      expect(sqlPage.count).toBe(page.length);
      expect(decoder.decode(sqlPage.bytes)).toBe(expected);
      expect(
        activity.text!.lineKey(expected.slice(expected.lastIndexOf("\n", expected.length - 3) + 1, -2)),
      ).toEqual(activity.key(page[page.length - 1]!));
      text++;
    } else if (page.length > 0) {
      rows++;
    } else {
      expect(sqlPage).toEqual({ bytes: new Uint8Array(0), count: 0 });
    }
    file += expected;
    if (page.length < limit) return { text, rows, file };
    after = activity.key(page[page.length - 1]!);
  }
}

describe("activity pages written by SQLite", () => {
  it("print every score round(score, 3) can give in [0, 1] as JavaScript does (1 not 1.0, 0.5, 0.125, 0 for -0.0)", async () => {
    const scores = [
      ...Array.from({ length: 1001 }, (_, k) => k / 1000),
      0.0005,
      0.0015,
      0.9995,
      0.12345,
      1 / 3,
      2 / 3,
      0.1 + 0.2,
      -0.0,
      -0.0004,
      1.0004,
    ];
    const scope = await institutionWith(scores.map((score) => ({ score })));
    const { text, rows } = await walk(scope, 2000);
    expect(text).toBe(1);
    expect(rows).toBe(0);
    // The same rows in keyset pages of 97: the SQL path continues from each page's last key.
    const paged = await walk(scope, 97);
    expect(paged.rows).toBe(0);
    expect(paged.text).toBe(Math.ceil(scores.length / 97));
  });

  it("take round(score, 3)'s thousandths for scores in [0, 1] that round() was not asked about: ties, near-ties, random doubles", async () => {
    // Away from a tie (score × 1000 within 1e-6 of a half) the SQL computes floor(score × 1000 + 0.5)
    // instead of calling round(); at a tie, or a hair from one, it calls round(). Both sides of that
    // line, and exact binary ties (0.0625: round() gives 0.063), must print what the row path prints.
    const bits = new DataView(new ArrayBuffer(8));
    const ulps = (x: number, n: number) => {
      bits.setFloat64(0, x);
      bits.setBigUint64(0, bits.getBigUint64(0) + BigInt(n));
      return bits.getFloat64(0);
    };
    let state = 11;
    const random = () => {
      state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
      return state / 2_147_483_648;
    };
    const scores: number[] = [
      0.0625, 0.1875, 0.3125, 0.4375, 0.5625, 0.6875, 0.8125, 0.9375, 0.0005, 0.9995, 0.4995, 0.5005,
    ];
    for (let k = 0; k < 1000; k += 7) {
      const tie = (k + 0.5) / 1000;
      scores.push(
        tie,
        ulps(tie, 1),
        ulps(tie, -1),
        ulps(tie, 3),
        tie + 4e-10,
        tie - 4e-10,
        tie + 1.5e-9,
        tie - 1.5e-9,
        tie + 1e-7,
        tie - 1e-7,
      );
    }
    for (let i = 0; i < 1500; i++) scores.push(random());
    for (let i = 0; i < 300; i++) scores.push(random() * 1e-3, 1 - random() * 1e-3);
    const scope = await institutionWith(scores.map((score) => ({ score })));
    const { text, rows } = await walk(scope, 5000);
    expect(rows).toBe(0);
    expect(text).toBe(1);
  });

  it.each<[string, Attempt]>([
    ["a quote", { lesson_id: 'les "q"' }],
    ["a comma", { skill: "a,b" }],
    ["a line feed", { lesson_id: "les\nx" }],
    ["a carriage return", { lesson_id: "les\rx" }],
    ["a CR at a cell's end", { lesson_id: "les\r" }],
    ["CRLF inside a cell", { lesson_id: "a\r\nb" }],
    ["a leading =", { training_item_id: "=1+1" }],
    ["a leading +", { user_id: "+44" }],
    ["a leading -", { course_id: "-10" }],
    ["a leading @", { skill: "@SUM(A1)" }],
    ["a leading tab", { cefr_level: "\tB1" }],
    ["a leading NUL", { lesson_id: "\u0000x" }],
    ["a NUL inside", { lesson_id: "x\u0000y" }],
    ["a leading full-width =", { lesson_id: "\uFF1D1" }],
    ["a leading full-width +", { lesson_id: "\uFF0B1" }],
    ["a leading full-width -", { lesson_id: "\uFF0D1" }],
    ["a leading full-width @", { lesson_id: "\uFF20x" }],
    ["a leading + in the last cell", { recorded_at: "+1" }],
    ["a negative integer", { duration_seconds: -5 }],
    ["a fraction in an integer column", { xp_awarded: 2.5 }],
    ["a float that prints long", { duration_seconds: 0.1 + 0.2 }],
    ["an integer past 2^53", { xp_awarded: 9007199254740993n }],
    ["text in an integer column", { duration_seconds: "=1" }],
    ["a score above 1", { score: 1.5 }],
    ["a negative score", { score: -0.25 }],
    ["a blob in a text column", { skill: new Uint8Array([0x61, 0x62]).buffer }],
  ])("step aside for a page with %s", async (_, odd) => {
    const attempts: Attempt[] = Array.from({ length: 30 }, () => ({}));
    attempts[17] = odd;
    let scope: SourceScope;
    try {
      scope = await institutionWith(attempts);
    } catch {
      return; // a value D1 itself refuses to bind (e.g. a BigInt) cannot reach an export
    }
    const { text, rows } = await walk(scope, 10);
    expect(rows).toBe(1);
    expect(text).toBe(2);
  });

  it("agree with the library on random rows of tricky cells, page by page", async () => {
    let state = 7;
    const random = () => {
      state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
      return state / 2_147_483_648;
    };
    const alphabet = [
      "a",
      "Z",
      "0",
      " ",
      ":",
      ".",
      "_",
      "é",
      "€",
      "𝄞",
      "'",
      ";",
      "=",
      "+",
      "-",
      "@",
      "\t",
      ",",
      '"',
      "\n",
      "\r",
      "\uFF1D",
      "\uFF20",
    ];
    const text = () => {
      let out = "";
      for (let n = Math.floor(random() * 5); n > 0; n--)
        out += alphabet[Math.floor(random() * alphabet.length)];
      return out;
    };
    // Mostly plain rows, some pages with a tricky cell.
    const attempts: Attempt[] = Array.from({ length: 600 }, () => {
      const a: Attempt = { score: Math.round(random() * 1000) / 1000 };
      if (random() < 0.01) a.lesson_id = text();
      if (random() < 0.01) a.skill = text();
      if (random() < 0.005) a.duration_seconds = -Math.floor(random() * 10);
      return a;
    });
    const scope = await institutionWith(attempts);
    const { text: sqlPages, rows: rowPages } = await walk(scope, 23);
    expect(sqlPages).toBeGreaterThan(3);
    expect(rowPages).toBeGreaterThan(3);
  });
});

describe("plain SQL text end to end", () => {
  it("the page bytes are the library's for a whole export, UTF-8 and all", async () => {
    const scope = await institutionWith(
      Array.from({ length: 250 }, (_, i) => ({
        lesson_id: `les_${"é€𝄞".repeat(i % 4)}`,
        score: (i % 11) / 10,
      })),
    );
    const { text, rows, file } = await walk(scope, 64);
    expect(rows).toBe(0);
    expect(text).toBe(4);
    expect(utf8(file).length).toBeGreaterThan(250 * 100);
  });
});

describe("inKeyOrder", () => {
  const lines = (...rows: [string, string][]) => utf8(rows.map(([id, at]) => `${id},${at},x,1\r\n`).join(""));
  it("accepts lines ascending by occurred_at, then id, compared as bytes", () => {
    expect(
      inKeyOrder(
        lines(
          ["b", "2026-01-01T00:00:00Z"],
          ["a", "2026-01-01T00:00:01Z"],
          ["b", "2026-01-01T00:00:01Z"],
          ["bb", "2026-01-01T00:00:01Z"],
        ),
      ),
    ).toBe(true);
    expect(inKeyOrder(lines(["z", "2026-01-01T00:00:00Z"], ["é", "2026-01-01T00:00:00Z"]))).toBe(true);
    expect(inKeyOrder(lines(["é", "2026-01-01T00:00:00Z"], ["z", "2026-01-01T00:00:00Z"]))).toBe(false);
    expect(inKeyOrder(lines(["é", "2026-01-01T00:00:00.5Z"], ["z", "2026-01-01T00:00:00Z"]))).toBe(true);
    expect(inKeyOrder(lines(["a", "t"]))).toBe(true);
  });
  it("refuses lines out of order or with a repeated key", () => {
    expect(inKeyOrder(lines(["a", "2026-01-01T00:00:01Z"], ["b", "2026-01-01T00:00:00Z"]))).toBe(false);
    expect(inKeyOrder(lines(["b", "2026-01-01T00:00:00Z"], ["a", "2026-01-01T00:00:00Z"]))).toBe(false);
    expect(inKeyOrder(lines(["bb", "t"], ["b", "t"]))).toBe(false);
    expect(inKeyOrder(lines(["a", "t"], ["a", "t"]))).toBe(false);
  });
});
