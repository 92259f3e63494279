import { parse } from "csv-parse/sync";
import { stringify } from "csv-stringify/sync";
import { describe, expect, it } from "vitest";
import { type Cell, CSV_OPTIONS, csvHeader, csvRows, plainLines } from "../../src/domains/exports/csv";
import { utf8 } from "../../src/platform/crypto/encoding";

describe("CSV formatting", () => {
  it("writes RFC 4180: comma separated, CRLF after every row, quotes only where needed", () => {
    const text =
      csvHeader(["a", "b", "c"]) +
      csvRows(
        [
          ["plain", 1, true],
          ['Doe, "Jo"\nsecond line', -2.5, false],
          [null, 0, "x"],
        ],
        3,
      );
    expect(text).toBe('a,b,c\r\nplain,1,true\r\n"Doe, ""Jo""\nsecond line",-2.5,false\r\n,0,x\r\n');
    expect(parse(text, { columns: true })).toEqual([
      { a: "plain", b: "1", c: "true" },
      { a: 'Doe, "Jo"\nsecond line', b: "-2.5", c: "false" },
      { a: "", b: "0", c: "x" },
    ]);
  });

  it.each([
    ["=1+1", "'=1+1"],
    ["+44 20 7946 0000", "'+44 20 7946 0000"],
    ["-10", "'-10"],
    ["@SUM(A1:A2)", "'@SUM(A1:A2)"],
    ["\tcmd", "'\tcmd"],
    ["\rcmd", '"\'\rcmd"'],
    ["\u0000cmd", "'\u0000cmd"],
    ['=HYPERLINK("http://x","y")', '"\'=HYPERLINK(""http://x"",""y"")"'],
    ["safe = text", "safe = text"],
  ])("guards the text cell %j against formula injection", (cell, written) => {
    expect(csvRows([[cell]], 1)).toBe(`${written}\r\n`);
  });

  it("quotes cells with a bare line feed or carriage return", () => {
    expect(csvRows([["a\nb", "a\rb", "a\r\nb"]], 3)).toBe('"a\nb","a\rb","a\r\nb"\r\n');
  });

  it("leaves numbers alone, negative ones too", () => {
    expect(csvRows([[-3, 0.875, 12]], 3)).toBe("-3,0.875,12\r\n");
  });

  it("writes only the first `width` cells (sources append hidden key columns)", () => {
    expect(csvRows([["a", "b", "hidden-key"]], 2)).toBe("a,b\r\n");
  });

  it("is the concatenation of its rows' texts (the writer relies on it to find a part boundary's row)", () => {
    const rows = [
      ["x,y", 1],
      ["é\n€", 2],
      ["𝄞", -1],
      ["", null],
    ];
    expect(csvRows(rows, 2)).toBe(rows.map((row) => csvRows([row], 2)).join(""));
  });

  it("writes exactly what csv-stringify writes, on random rows of tricky cells (plain rows are joined without it)", () => {
    let seed = 42;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const alphabet = [
      "a",
      "Z",
      " ",
      ",",
      '"',
      "\n",
      "\r",
      "\t",
      "=",
      "+",
      "-",
      "@",
      "\0",
      "é",
      "€",
      "𝄞",
      "\uFF1D",
      "\uFF0D",
      "'",
      ";",
      "0",
      ".",
    ];
    const cell = (): Cell => {
      const kind = random();
      if (kind < 0.1) return null;
      if (kind < 0.2) return random() < 0.5;
      if (kind < 0.35) return Math.round((random() - 0.5) * 2000) / (random() < 0.5 ? 1 : 8);
      let text = "";
      for (let n = Math.floor(random() * 6); n > 0; n--)
        text += alphabet[Math.floor(random() * alphabet.length)];
      return random() < 0.5 ? text : `plain_${text.replace(/[^a-zA-Z0-9]/g, "")}`;
    };
    const rows = Array.from({ length: 5000 }, () => Array.from({ length: 6 }, cell));
    const plain = rows.filter((row) =>
      row
        .slice(0, 5)
        .every((c) => typeof c !== "string" || !/[",\r\n]|^[=+\-@\t\r\0\uFF1D\uFF0B\uFF0D\uFF20]/.test(c)),
    );
    expect(plain.length).toBeGreaterThan(500);
    expect(plain.length).toBeLessThan(4500);
    const columns = ["0", "1", "2", "3", "4"];
    expect(csvRows(rows, 5)).toBe(stringify(rows, { ...CSV_OPTIONS, columns }));
    expect(csvRows(plain, 5)).toBe(stringify(plain, { ...CSV_OPTIONS, columns }));
  });

  it("accepts cells joined by commas (as SQLite joins them) only where that is exactly what csv-stringify writes", () => {
    let seed = 1234;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const alphabet = [
      "a",
      "Z",
      " ",
      ",",
      '"',
      "\n",
      "\r",
      "\t",
      "=",
      "+",
      "-",
      "@",
      "\0",
      "é",
      "€",
      "𝄞",
      "\uFF1D",
      "\uFF0B",
      "\uFF0D",
      "\uFF20",
      "'",
      "0",
      ".",
    ];
    const cell = (): string | number => {
      if (random() < 0.2) return Math.round((random() - 0.1) * 2000);
      let text = "";
      for (let n = Math.floor(random() * 4); n > 0; n--)
        text += alphabet[Math.floor(random() * alphabet.length)];
      return random() < 0.7 ? `p_${text.replace(/[^a-zA-Z0-9]/g, "")}` : text;
    };
    let accepted = 0;
    let refused = 0;
    for (let page = 0; page < 400; page++) {
      const rows = Array.from({ length: 1 + Math.floor(random() * 4) }, () =>
        Array.from({ length: 4 }, cell),
      );
      const joined = `${rows.map((row) => row.join(",")).join("\r\n")}\r\n`;
      const library = stringify(rows, { ...CSV_OPTIONS, columns: ["0", "1", "2", "3"] });
      if (plainLines(utf8(joined), rows.length, 4)) {
        accepted++;
        expect(joined).toBe(library);
      } else {
        refused++;
      }
      // Rows of plain text and non-negative numbers are always accepted.
      const plain = rows.map((row) =>
        row.map((c) => (typeof c === "number" ? Math.abs(c) : `p_${c.replace(/[^a-zA-Z0-9é€𝄞 ]/gu, "")}`)),
      );
      expect(plainLines(utf8(`${plain.map((row) => row.join(",")).join("\r\n")}\r\n`), plain.length, 4)).toBe(
        true,
      );
    }
    expect(accepted).toBeGreaterThan(40);
    expect(refused).toBeGreaterThan(40);
    expect(plainLines(utf8("a,b\r\n"), 1, 3)).toBe(false);
    expect(plainLines(utf8("a,b,c\r\n"), 1, 2)).toBe(false);
    expect(plainLines(utf8("a,b\r\nc,d\r\n"), 1, 2)).toBe(false);
    expect(plainLines(utf8("a,b"), 1, 2)).toBe(false);
  });
});
