import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { csvHeader, csvRows } from "../../src/domains/exports/csv";

describe("CSV formatting", () => {
  it("writes RFC 4180: comma separated, CRLF after every row, quotes only where needed", () => {
    const text = csvHeader(["a", "b", "c"]) + csvRows([["plain", 1, true], ['Doe, "Jo"\nsecond line', -2.5, false], [null, 0, "x"]], 3);
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
    ["=HYPERLINK(\"http://x\",\"y\")", '"\'=HYPERLINK(""http://x"",""y"")"'],
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
    const rows = [["x,y", 1], ["é\n€", 2], ["𝄞", -1], ["", null]];
    expect(csvRows(rows, 2)).toBe(rows.map((row) => csvRows([row], 2)).join(""));
  });
});
