import { describe, expect, it } from "vitest";
import { call, callJson } from "../helpers/api";
import { createTenant, mintToken } from "../helpers/tenants";

// Pins the exact wire form of the token list (keys, their order, escaping, content type), so that
// how the page is assembled can change without an integrator seeing any difference.
const TOKEN_KEYS = [
  "id",
  "name",
  "kind",
  "abilities",
  "prefix",
  "user_id",
  "created_at",
  "last_used_at",
  "expires_at",
];

const AWKWARD_NAMES = [
  'quote " backslash \\ slash / done',
  // Control characters are refused in names (test/tokens/display-text.test.ts); these are not.
  "zero\u200bwidth, no-break\u00a0space, soft\u00adhyphen",
  "Ünïcödé € — \u2028 日本語 \u2029 😀",
  "</script><b>html</b> & 'single'",
];

describe("the wire form of GET /api/integrations/tokens", () => {
  it("lists each token exactly as its creation showed it (minus the plain value), as compact JSON", async () => {
    const { admin } = await createTenant();
    const expiry = new Date(Date.now() + 86_400_000).toISOString();
    const created = [];
    for (const [i, name] of AWKWARD_NAMES.entries()) {
      const { body } = await mintToken(
        admin,
        i % 2 ? ["content:read", "progress:read", "tokens:read"] : ["*"],
        {
          name,
          ...(i === 1 ? { expires_at: expiry } : {}),
        },
      );
      created.push(body);
    }

    const res = await call("/api/integrations/tokens?kind=api", { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("application/json");
    const text = await res.text();
    const body = JSON.parse(text);
    // Byte for byte what JSON.stringify gives for the same value (no whitespace, the same escapes).
    expect(text).toBe(JSON.stringify(body));
    expect(Object.keys(body)).toEqual(["data", "links", "meta"]);
    expect(Object.keys(body.links)).toEqual(["first", "last", "prev", "next"]);
    expect(Object.keys(body.meta)).toEqual(["total", "per_page", "current_page", "last_page"]);
    expect(body.meta).toEqual({ total: AWKWARD_NAMES.length, per_page: 25, current_page: 1, last_page: 1 });

    const expected = created.reverse().map(({ token: _plain, ...listed }) => listed);
    expect(body.data).toEqual(expected);
    for (const item of body.data) expect(Object.keys(item)).toEqual(TOKEN_KEYS);
    expect(body.data.map((t: any) => t.name)).toEqual([...AWKWARD_NAMES].reverse());
    expect(body.data[2].expires_at).toBe(expiry.replace(/\.\d{3}Z$/, "Z"));
    expect(body.data[0].abilities).toEqual(["content:read", "progress:read", "tokens:read"]);
    expect(body.data[1].abilities).toEqual(["*"]);
  });

  it("shows an admin the institution's tokens of every kind and anybody else only their own", async () => {
    const { admin, instructor } = await createTenant();
    const mine = await mintToken(instructor, ["content:read"]);
    await mintToken(admin, ["content:read"]);

    const all = await callJson("/api/integrations/tokens", { token: admin.token });
    // The three sign-in sessions (admin, instructor, learner) and the two API tokens.
    expect(all.body.meta.total).toBe(5);
    expect(all.body.data.map((t: any) => t.kind).sort()).toEqual([
      "api",
      "api",
      "session",
      "session",
      "session",
    ]);
    const sessions = await callJson("/api/integrations/tokens?kind=session", { token: admin.token });
    expect(sessions.body.meta.total).toBe(3);
    expect(sessions.body.data.map((t: any) => t.kind)).toEqual(["session", "session", "session"]);

    const own = await callJson("/api/integrations/tokens?kind=api", { token: instructor.token });
    expect(own.body.data.map((t: any) => t.id)).toEqual([mine.id]);
    expect(own.body.meta.total).toBe(1);
    const ownPast = await callJson("/api/integrations/tokens?page=3&per_page=1", { token: instructor.token });
    expect(ownPast.body.data).toEqual([]);
    expect(ownPast.body.meta).toEqual({ total: 2, per_page: 1, current_page: 3, last_page: 2 });
    expect(new URL(ownPast.body.links.prev).searchParams.get("page")).toBe("2");
  });

  it("answers an empty list with an empty page", async () => {
    const { admin } = await createTenant();
    const res = await call("/api/integrations/tokens?kind=api", { token: admin.token });
    const text = await res.text();
    expect(text).toBe(JSON.stringify(JSON.parse(text)));
    const body = JSON.parse(text);
    expect(body.data).toEqual([]);
    expect(body.meta).toEqual({ total: 0, per_page: 25, current_page: 1, last_page: 1 });
    expect(body.links.next).toBeNull();
    expect(body.links.prev).toBeNull();
  });
});
