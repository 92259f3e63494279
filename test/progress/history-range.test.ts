import { describe, expect, it } from "vitest";
import { presentHistory } from "../../src/domains/progress/reports/present";

const base = { userId: "usr_x", timeZone: "UTC", granularity: "day" as const, rows: [] };

describe("progress history series", () => {
  it("walks days as numbers: a range ending on 9999-12-31 ends there", () => {
    const history = presentHistory({ ...base, from: "9999-12-30", to: "9999-12-31" });
    expect(history.series.map((p) => p.date)).toEqual(["9999-12-30", "9999-12-31"]);
  });

  it("never loops past its cap: a range longer than 366 days throws instead of growing", () => {
    expect(presentHistory({ ...base, from: "2024-01-01", to: "2024-12-31" }).series).toHaveLength(366);
    expect(() => presentHistory({ ...base, from: "2000-01-01", to: "2100-12-31" })).toThrow(/iterations/);
  });
});
