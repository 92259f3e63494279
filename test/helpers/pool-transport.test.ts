import { describe, expect, it } from "vitest";
import { stringifyPlain } from "./pool-transport";

// The expected strings are what the pool's own stringify (devalue 5) writes for the same values, the
// format the runner in workerd parses; every workerd test file loading its modules is the rest of the check.
describe("module answers written as plain JSON", () => {
  it("writes a module's code as devalue does", () => {
    const answer = { t: "s", i: 7, r: { code: 'const a = "x";\n', invalidate: false, file: null } };
    expect(stringifyPlain(answer)).toBe(
      '[{"t":1,"i":2,"r":3},"s",7,{"code":4,"invalidate":5,"file":6},"const a = \\"x\\";\\n",false,null]',
    );
  });

  it("writes arrays and undefined as devalue does", () => {
    expect(stringifyPlain({ t: "s", i: 8, r: { externalize: "node:fs", list: [1, undefined, "b"] } })).toBe(
      '[{"t":1,"i":2,"r":3},"s",8,{"externalize":4,"list":5},"node:fs",[6,-1,7],1,"b"]',
    );
    expect(stringifyPlain({ t: "s", i: 9, r: undefined })).toBe('[{"t":1,"i":2,"r":-1},"s",9]');
    expect(stringifyPlain(undefined)).toBe("-1");
  });

  it("keeps every character of the code, line separators and lone surrogates included", () => {
    const code = "a\u2028b\u2029c\u0000\u001f\ud800 é 😀\\";
    const [, text] = JSON.parse(stringifyPlain({ code }));
    expect(text).toBe(code);
  });

  it("leaves to the pool what only devalue can write", () => {
    const shared = { a: 1 };
    for (const value of [
      new Error("boom"),
      new Uint8Array(2),
      Number.NaN,
      Number.POSITIVE_INFINITY,
      -0,
      // biome-ignore lint/suspicious/noSparseArray: a hole is what is being refused
      [, 1],
      Object.create(null),
      new Date(0),
      { x: shared, y: shared },
    ]) {
      expect(() => stringifyPlain({ t: "s", i: 1, r: value })).toThrow();
    }
  });
});
