import { describe, expect, it } from "vitest";
import {
  type DisplayTextRule,
  displayText,
  EXTERNAL_ID,
  GROUP_NAME,
  isSafeForDisplay,
  PERSON_NAME,
  sanitizeDisplayText,
} from "../../src/platform/text";

describe("sanitizeDisplayText", () => {
  it("drops control and bidi characters, turns line breaks and tabs into spaces, collapses and trims", () => {
    expect(sanitizeDisplayText("  Ana\u0000\u0007 \u202ELima\u2066 ", PERSON_NAME)).toBe("Ana Lima");
    expect(sanitizeDisplayText("Ana\n\tLima\r\nda\u0085Silva", PERSON_NAME)).toBe("Ana Lima da Silva");
    expect(sanitizeDisplayText("a\u001b[31mb", PERSON_NAME)).toBe("a[31mb");
    expect(sanitizeDisplayText("Ünïcödé 日本語 😀 <b>&amp;</b>", PERSON_NAME)).toBe(
      "Ünïcödé 日本語 😀 <b>&amp;</b>",
    );
  });

  it("answers null for what is not a string or leaves nothing", () => {
    for (const value of [undefined, null, 42, ["Ana"], { name: "Ana" }, "", "   ", "\u0000\u202E\n"]) {
      expect(sanitizeDisplayText(value, PERSON_NAME)).toBeNull();
    }
  });

  it("cuts to the rule's length in characters (never half an emoji), and trims what the cut exposes", () => {
    expect(sanitizeDisplayText("x".repeat(5_000), PERSON_NAME)).toBe("x".repeat(200));
    expect(sanitizeDisplayText(`${"x".repeat(199)}😀tail`, PERSON_NAME)).toBe(`${"x".repeat(199)}😀`);
    expect(sanitizeDisplayText("😀".repeat(300), PERSON_NAME)).toBe("😀".repeat(200));
    expect(sanitizeDisplayText(`${"x".repeat(199)} yz`, PERSON_NAME)).toBe("x".repeat(199));
    expect(sanitizeDisplayText("g".repeat(150), GROUP_NAME)).toHaveLength(100);
  });

  it("replaces a rule's reserved characters (a group's ;) by a space", () => {
    expect(sanitizeDisplayText("7b;french", GROUP_NAME)).toBe("7b french");
    expect(sanitizeDisplayText(";", GROUP_NAME)).toBeNull();
    expect(sanitizeDisplayText("7b;french", PERSON_NAME)).toBe("7b;french");
  });

  it("always answers what the refusing schema of the same rule accepts unchanged", () => {
    const alphabet = [
      "a",
      "Z",
      " ",
      "\t",
      "\n",
      "\u0000",
      "\u0007",
      "\u007f",
      "\u0085",
      "\u202A",
      "\u202E",
      "\u2066",
      "\u2069",
      "\u00a0",
      "\u2028",
      ";",
      "<",
      "é",
      "😀",
      "\uD83D",
      "\uDE00",
    ];
    const SAFE = ["a", "Z", " ", "\u00a0", ";", "<", "é", "😀"];
    let seed = 7;
    const random = () => {
      seed = (seed * 48_271) % 2_147_483_647;
      return seed / 2_147_483_647;
    };
    const rules: DisplayTextRule[] = [PERSON_NAME, GROUP_NAME, EXTERNAL_ID, { max: 20, multiline: true }];
    for (const rule of rules) {
      const schema = displayText(rule);
      for (let i = 0; i < 2_000; i++) {
        const length = Math.floor(random() * (rule.max + 40));
        // Half the values from characters every rule accepts (but `;`), half from all of them.
        const from = i % 2 === 0 ? alphabet : SAFE;
        const value = Array.from({ length }, () => from[Math.floor(random() * from.length)]).join("");
        const clean = sanitizeDisplayText(value, rule);
        if (clean === null) {
          expect(schema.safeParse(value).success, JSON.stringify(value)).toBe(false);
          continue;
        }
        expect(schema.safeParse(clean), JSON.stringify(value)).toEqual({ success: true, data: clean });
        expect(isSafeForDisplay(clean, rule.multiline)).toBe(true);
        // What the schema accepts already is kept, but for runs of white space on one line.
        if (schema.safeParse(value).success)
          expect(clean).toBe((rule.multiline ? value : value.replace(/\s+/g, " ")).trim());
      }
    }
  });
});

describe("displayText schemas", () => {
  it("refuse a group name with ; and an over-long name, naming the reason", () => {
    const group = displayText(GROUP_NAME).safeParse("7b;french");
    expect(group.success).toBe(false);
    expect(group.error?.issues.map((i) => i.message)).toEqual(["must not contain ;"]);
    const name = displayText(PERSON_NAME).safeParse("x".repeat(201));
    expect(name.error?.issues.map((i) => i.message)).toEqual(["must be at most 200 characters"]);
  });
});
