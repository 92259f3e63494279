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
