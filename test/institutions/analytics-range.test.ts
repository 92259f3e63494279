import { describe, expect, it } from "vitest";
import {
  periodStart,
  periodStarts,
  resolveRange,
  todayIn,
} from "../../src/domains/institutions/analytics/range";

describe("analytics periods", () => {
  it("weeks start on Monday, months on the first, across a year's end", () => {
    expect(periodStart("2026-11-25", "week")).toBe("2026-11-23");
    expect(periodStart("2026-11-23", "week")).toBe("2026-11-23");
    expect(periodStart("2026-11-29", "week")).toBe("2026-11-23");
    expect(periodStarts("2026-11-15", "2027-02-03", "month")).toEqual([
      "2026-11-01",
      "2026-12-01",
      "2027-01-01",
      "2027-02-01",
    ]);
    expect(periodStarts("2026-12-30", "2027-01-12", "week")).toEqual([
      "2026-12-28",
      "2027-01-04",
      "2027-01-11",
    ]);
    expect(periodStarts("2024-02-27", "2024-03-01", "day")).toEqual([
      "2024-02-27",
      "2024-02-28",
      "2024-02-29",
      "2024-03-01",
    ]);
  });

  it("the default range ends today in the institution's time zone", () => {
    const at = Date.parse("2026-11-25T23:30:00Z");
    expect(todayIn("Asia/Tokyo", at)).toBe("2026-11-26");
    expect(todayIn("America/Los_Angeles", at)).toBe("2026-11-25");
    expect(resolveRange({}, "Asia/Tokyo", at)).toEqual({ from: "2026-10-28", to: "2026-11-26" });
    expect(resolveRange({ to: "2026-03-31" }, "UTC", at)).toEqual({ from: "2026-03-02", to: "2026-03-31" });
  });

  it("366 days at most, both ends included", () => {
    expect(resolveRange({ from: "2024-01-01", to: "2024-12-31" }, "UTC", Date.now())).toEqual({
      from: "2024-01-01",
      to: "2024-12-31",
    });
    expect(() => resolveRange({ from: "2023-12-31", to: "2024-12-31" }, "UTC", Date.now())).toThrow(/366/);
  });
});

describe("analytics periods are bounded", () => {
  it("never produces more periods than its cap: a range of a century throws instead of looping", () => {
    expect(() => periodStarts("2000-01-01", "2100-12-31", "day")).toThrow(/iterations/);
    expect(() => periodStarts("2000-01-01", "2100-12-31", "month")).toThrow(/iterations/);
    expect(periodStarts("2024-01-01", "2024-12-31", "day")).toHaveLength(366);
  });

  it("walks days as numbers: the end of year 9999 is the end of the series, not a string that sorts first", () => {
    expect(periodStarts("9999-12-29", "9999-12-31", "day")).toEqual([
      "9999-12-29",
      "9999-12-30",
      "9999-12-31",
    ]);
    expect(periodStarts("9999-12-01", "9999-12-31", "month")).toEqual(["9999-12-01"]);
  });

  it("refuses impossible and out-of-range days with 422 naming the parameter, without throwing anything else", () => {
    for (const value of ["2026-00-10", "2026-13-45", "2026-02-30", "9999-12-31", "1999-12-31"]) {
      for (const key of ["from", "to"] as const) {
        let thrown: unknown;
        try {
          resolveRange({ [key]: value }, "UTC", Date.parse("2026-11-25T12:00:00Z"));
        } catch (error) {
          thrown = error;
        }
        expect(thrown, `${key}=${value}`).toMatchObject({ status: 422 });
        expect((thrown as any).errors[0].path, `${key}=${value}`).toBe(key);
      }
    }
  });
});
