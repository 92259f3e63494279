import { describe, expect, it } from "vitest";
import { jsonArrays } from "../../src/platform/batch";

describe("jsonArrays", () => {
  it("keeps rows that fit in one array as one", () => {
    expect(jsonArrays([{ a: 1 }, [2, "x"], "é"])).toEqual(['[{"a":1},[2,"x"],"é"]']);
  });

  it("binds nothing for no rows", () => {
    expect(jsonArrays([])).toEqual([]);
  });

  it("splits in order, every array within the budget, every row once", () => {
    const rows = Array.from({ length: 1000 }, (_, i) => ({ id: `usr_${i}`, groups: ["x".repeat(i % 40)] }));
    const arrays = jsonArrays(rows, 2_000);
    expect(arrays.length).toBeGreaterThan(10);
    for (const array of arrays) expect(array.length).toBeLessThanOrEqual(2_000);
    expect(arrays.flatMap((a) => JSON.parse(a))).toEqual(rows);
  });

  it("gives a row larger than the budget an array of its own", () => {
    const big = "y".repeat(50);
    expect(jsonArrays(["a", big, "b"], 20)).toEqual(['["a"]', `["${big}"]`, '["b"]']);
  });
});
