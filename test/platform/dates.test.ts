import { describe, expect, it } from "vitest";
import {
  addDays,
  calendarDay,
  dateTime,
  dayProblem,
  daysBetween,
  formatDay,
  loopCap,
  MAX_SPAN_DAYS,
  parseDay,
} from "../../src/platform/dates";

describe("calendar days", () => {
  it("parses real days of any year and refuses everything else without throwing", () => {
    expect(parseDay("2024-02-29")).toBe(Date.UTC(2024, 1, 29));
    expect(parseDay("9999-12-31")).toBe(Date.parse("9999-12-31T00:00:00Z"));
    for (const value of [
      "2026-00-10",
      "2026-13-45",
      "2026-02-30",
      "2025-02-29",
      "2026-1-5",
      "26-01-01",
      "",
      "yesterday",
      "2026-01-01T00:00:00Z",
      "+02026-01-01",
    ])
      expect(parseDay(value), value).toBeNull();
  });

  it("accepts 2000-01-01 to 2100-12-31 only", () => {
    expect(dayProblem("2000-01-01")).toBeNull();
    expect(dayProblem("2100-12-31")).toBeNull();
    expect(dayProblem("1999-12-31")).toMatch(/between 2000-01-01 and 2100-12-31/);
    expect(dayProblem("2101-01-01")).toMatch(/between/);
    expect(dayProblem("2026-13-45")).toMatch(/YYYY-MM-DD/);
    expect(MAX_SPAN_DAYS).toBe(36_890);
  });

  it("adds days as numbers across year ends, and never writes a six-digit year", () => {
    expect(addDays("2026-12-31", 1)).toBe("2027-01-01");
    expect(addDays("2024-03-01", -1)).toBe("2024-02-29");
    expect(daysBetween("2024-01-01", "2024-12-31")).toBe(366);
    expect(() => addDays("9999-12-31", 1)).toThrow(/out of range/);
    expect(() => formatDay(Number.NaN)).toThrow(/out of range/);
  });

  it("the schemas answer issues, never exceptions", () => {
    expect(calendarDay().safeParse("2026-11-21").success).toBe(true);
    for (const value of ["2026-13-45", "9999-12-31", "2026-02-30"]) {
      const result = calendarDay().safeParse(value);
      expect(result.success, value).toBe(false);
    }
    expect(dateTime().safeParse("2026-11-21T09:30:00+01:00").success).toBe(true);
    expect(dateTime().safeParse("2100-12-31T23:59:59Z").success).toBe(true);
    for (const value of [
      "9999-12-31T00:00:00Z",
      "1999-12-31T23:59:59Z",
      "2100-12-31T23:00:00-05:00",
      "2026-13-45T00:00:00Z",
    ]) {
      const result = dateTime().safeParse(value);
      expect(result.success, value).toBe(false);
      expect(result.error?.issues, value).toHaveLength(1);
    }
  });
});

describe("loop caps", () => {
  it("throws on the first iteration past the cap", () => {
    const tick = loopCap(3, "test loop");
    tick();
    tick();
    tick();
    expect(() => tick()).toThrow("test loop: more than 3 iterations");
  });
});
