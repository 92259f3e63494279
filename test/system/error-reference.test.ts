import { describe, expect, it } from "vitest";
import { ERROR_CATALOGUE, type ErrorCode } from "../../src/platform/error-catalogue";
import { BASE, call, callJson } from "../helpers/api";
import { freshIp } from "../helpers/tenants";

/** The section of the error reference about `code`: its heading to the next section. */
function sectionOf(html: string, code: string): string | undefined {
  return new RegExp(`<section id="${code}">([\\s\\S]*?)</section>`).exec(html)?.[1];
}

/** Fetches a problem's `type` from the worker, as a reader following it would (the fragment stays with the reader). */
async function follow(type: string): Promise<{ res: Response; html: string; anchor: string }> {
  const url = new URL(type);
  const res = await call(url.origin + url.pathname + url.search, {
    headers: { "CF-Connecting-IP": freshIp() },
  });
  return { res, html: await res.text(), anchor: url.hash.slice(1) };
}

describe("GET /api/docs/errors", () => {
  it("has an entry for every code of the catalogue: status, title, what it means and what to do", async () => {
    const res = await call("/api/docs/errors", { headers: { "CF-Connecting-IP": freshIp() } });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("Content-Security-Policy")).toContain("default-src 'none'");
    const html = await res.text();
    const missing: string[] = [];
    for (const code of Object.keys(ERROR_CATALOGUE) as ErrorCode[]) {
      const { status, title, meaning, action } = ERROR_CATALOGUE[code];
      const section = sectionOf(html, code);
      if (!section) {
        missing.push(`${code}: no <section id="${code}">`);
        continue;
      }
      expect(section).toContain(`${status} · ${title}`);
      expect(meaning.length, `${code}: meaning`).toBeGreaterThan(10);
      expect(action.length, `${code}: action`).toBeGreaterThan(5);
      expect(section).toContain("What to do:");
      expect(html).toContain(`<a href="#${code}">`);
    }
    expect(missing).toEqual([]);
    // One section per code, nothing else.
    expect([...html.matchAll(/<section id="([^"]+)">/g)].map((m) => m[1])).toEqual(
      Object.keys(ERROR_CATALOGUE),
    );
    // Nothing loaded from anywhere, no script.
    expect(html).not.toMatch(/<script|https?:\/\//);
  });

  it("is where the `type` of each problem points, on the request's own origin", async () => {
    const problems: [ErrorCode, Promise<Response>][] = [
      ["not_found", call("/api/nothing-here")],
      ["method_not_allowed", call("/healthz", { method: "DELETE" })],
      ["unauthenticated", call("/api/auth/me")],
      [
        "malformed_json",
        call("/api/auth/sign-in", {
          rawBody: "{",
          headers: { "Content-Type": "application/json", "CF-Connecting-IP": freshIp() },
        }),
      ],
      [
        "validation_failed",
        call("/api/auth/sign-in", { body: { email: "nobody" }, headers: { "CF-Connecting-IP": freshIp() } }),
      ],
      [
        "invalid_credentials",
        call("/api/auth/sign-in", {
          body: { email: "nobody@example.com", password: "wrong password" },
          headers: { "CF-Connecting-IP": freshIp() },
        }),
      ],
    ];
    for (const [code, pending] of problems) {
      const res = await pending;
      const body = await res.json<{ type: string; code: string }>();
      expect(body.code).toBe(code);
      expect(body.type).toBe(`${BASE}/api/docs/errors#${code}`);
      const { res: page, html, anchor } = await follow(body.type);
      expect(page.status, body.type).toBe(200);
      expect(anchor).toBe(code);
      expect(sectionOf(html, anchor), `${body.type}: its section`).toContain(`<code>${code}</code>`);
    }
  });

  it("takes the origin from the request, wherever the API is served", async () => {
    const { body } = await callJson("http://127.0.0.1:8787/api/nothing-here");
    expect(body.type).toBe("http://127.0.0.1:8787/api/docs/errors#not_found");
    const { res } = await follow(body.type);
    expect(res.status).toBe(200);
  });

  it("is linked from the OpenAPI document's introduction and described on Problem.type; no placeholder host remains", async () => {
    const { body: doc } = await callJson("/api/openapi.json", { headers: { "CF-Connecting-IP": freshIp() } });
    expect(doc.info.description).toContain("(/api/docs/errors)");
    const type = doc.components.schemas.Problem.properties.type;
    expect(type).toMatchObject({ type: "string", format: "uri" });
    expect(type.description).toContain("/api/docs/errors#<code>");
    // No link to the placeholder documentation host that no reader can open.
    expect(JSON.stringify(doc)).not.toContain("docs.lingua.example");
  });
});
