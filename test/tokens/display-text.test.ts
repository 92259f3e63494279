import { describe, expect, it } from "vitest";
import { isSafeForDisplay } from "../../src/platform/text";
import { callJson } from "../helpers/api";
import { createTenant } from "../helpers/tenants";

const REFUSED = {
  NUL: "before\u0000after",
  "line feed": "two\nlines",
  tab: "a\tb",
  escape: "red \u001b[31m text",
  DEL: "x\u007fy",
  "C1 control": "x\u0085y",
  "right-to-left override": "invoice\u202Egpj.exe",
  "left-to-right embedding": "a\u202Ab",
  "right-to-left isolate": "a\u2067b",
  "pop directional isolate": "a\u2069b",
};

describe("display strings", () => {
  it("are refused with a control or bidirectional formatting character, and accepted without", () => {
    for (const value of Object.values(REFUSED)) expect(isSafeForDisplay(value)).toBe(false);
    for (const value of ["HR sync", "Ünïcödé € 日本語 😀", "zero\u200bwidth", "a\u2028b", "‏x"]) {
      expect(isSafeForDisplay(value)).toBe(true);
    }
  });

  it("refuse a token name with any of them (422 naming the field) and create nothing", async () => {
    const { admin } = await createTenant();
    for (const [what, name] of Object.entries(REFUSED)) {
      const { res, body } = await callJson("/api/integrations/tokens", {
        token: admin.token,
        body: { name, abilities: ["content:read"] },
      });
      expect(res.status, what).toBe(422);
      expect(body.code).toBe("validation_failed");
      expect(body.errors).toEqual([
        {
          path: "name",
          message: "must not contain control characters or bidirectional formatting characters",
        },
      ]);
    }
    const list = await callJson("/api/integrations/tokens?kind=api", { token: admin.token });
    expect(list.body.meta.total).toBe(0);
  });

  it("refuse a webhook description with one (422 naming the field)", async () => {
    const { admin } = await createTenant();
    const { res, body } = await callJson("/api/integrations/webhooks", {
      token: admin.token,
      body: {
        url: "https://hooks.example.test/lingua",
        events: ["lesson.completed"],
        description: "Payroll \u202Etxt.exe",
      },
    });
    expect(res.status).toBe(422);
    expect(body.errors).toEqual([
      {
        path: "description",
        message: "must not contain control characters or bidirectional formatting characters",
      },
    ]);
  });
});
