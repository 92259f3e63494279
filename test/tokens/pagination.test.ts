import { describe, expect, it } from "vitest";
import { callJson } from "../helpers/api";
import { createTenant, mintToken } from "../helpers/tenants";

describe("the list envelope on GET /api/integrations/tokens", () => {
  it("pages newest first with absolute links that keep the other parameters", async () => {
    const { admin } = await createTenant();
    const minted: string[] = [];
    for (let i = 0; i < 7; i++) minted.push((await mintToken(admin, ["content:read"])).id);
    const newestFirst = [...minted].reverse();

    const first = await callJson("/api/integrations/tokens?kind=api&per_page=3", { token: admin.token });
    expect(first.res.status).toBe(200);
    expect(first.body.meta).toEqual({ total: 7, per_page: 3, current_page: 1, last_page: 3 });
    expect(first.body.data.map((t: any) => t.id)).toEqual(newestFirst.slice(0, 3));
    const next = new URL(first.body.links.next);
    expect(next.origin).toBe("https://api.lingua.test");
    expect(Object.fromEntries(next.searchParams)).toEqual({ kind: "api", per_page: "3", page: "2" });
    expect(first.body.links.prev).toBeNull();
    expect(new URL(first.body.links.last).searchParams.get("page")).toBe("3");
    expect(new URL(first.body.links.first).searchParams.get("page")).toBe("1");

    const second = await callJson(first.body.links.next, { token: admin.token });
    expect(second.body.data.map((t: any) => t.id)).toEqual(newestFirst.slice(3, 6));
    expect(new URL(second.body.links.prev).searchParams.get("page")).toBe("1");

    const last = await callJson(second.body.links.next, { token: admin.token });
    expect(last.body.data.map((t: any) => t.id)).toEqual(newestFirst.slice(6));
    expect(last.body.links.next).toBeNull();

    const past = await callJson("/api/integrations/tokens?kind=api&per_page=3&page=9", {
      token: admin.token,
    });
    expect(past.res.status).toBe(200);
    expect(past.body.data).toEqual([]);
    expect(past.body.meta).toMatchObject({ total: 7, current_page: 9, last_page: 3 });
    expect(past.body.links.next).toBeNull();
  });

  it("defaults to 25 per page", async () => {
    const { admin } = await createTenant();
    const { body } = await callJson("/api/integrations/tokens", { token: admin.token });
    expect(body.meta).toMatchObject({ per_page: 25, current_page: 1 });
  });

  it.each(["page=0", "page=-1", "page=1.5", "page=abc", "per_page=0", "per_page=101"])(
    "rejects %s with 422",
    async (query) => {
      const { admin } = await createTenant();
      const { res, body } = await callJson(`/api/integrations/tokens?${query}`, { token: admin.token });
      expect(res.status).toBe(422);
      expect(body.errors[0].path).toBe(query.split("=")[0]);
    },
  );
});
