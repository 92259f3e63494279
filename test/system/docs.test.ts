/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import { callJson } from "../helpers/api";
import { freshIp } from "../helpers/tenants";

/**
 * Keeps the documentation honest where that is cheap: every relative link in README.md and docs/
 * resolves (and its #anchor, when it points into a Markdown file), and every path of the OpenAPI
 * document is mentioned in some guide. workerd has no file system, so Vite gathers the Markdown
 * texts and the repository's file names when it bundles this test.
 */

const MARKDOWN = import.meta.glob<string>(["/README.md", "/docs/**/*.md"], {
  query: "?raw",
  import: "default",
  eager: true,
});

// Names only: the files behind them are never loaded. Dot-files that docs link to are listed by name.
const REPOSITORY_FILES = Object.keys(
  import.meta.glob([
    "/**/*",
    "/.ci/*",
    "/.dev.vars.example",
    "!**/node_modules/**",
    "!**/.wrangler/**",
    "!**/.bench/**",
  ]),
);

/** Guides: the integrator's pages directly in docs/ (not the design notes, architecture or benchmarks). */
const NOT_GUIDES = new Set(["/docs/architecture.md", "/docs/benchmarks.md"]);
const GUIDES = Object.entries(MARKDOWN).filter(
  ([file]) => /^\/docs\/[^/]+\.md$/.test(file) && !NOT_GUIDES.has(file),
);

/** The text outside fenced code blocks and inline code spans, where a link or a heading is one. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "").replace(/`[^`\n]*`/g, "");
}

function linkTargets(markdown: string): string[] {
  const text = prose(markdown);
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] ?? "");
  const references = [...text.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1] ?? "");
  return [...inline, ...references];
}

const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//");

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const withoutFences = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
  for (const match of withoutFences.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = (match[1] ?? "").replace(/\[([^\]]*)\]\([^)]*\)/g, "$1");
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

function exists(path: string): boolean {
  const bare = path.replace(/\/$/, "");
  return REPOSITORY_FILES.some((file) => file === bare || file.startsWith(`${bare}/`));
}

/** Every broken relative link, as "file: target (why)". */
function brokenLinks(): string[] {
  const broken: string[] = [];
  for (const [file, markdown] of Object.entries(MARKDOWN)) {
    for (const target of linkTargets(markdown)) {
      if (isExternal(target)) continue;
      const [pathPart = "", anchor] = target.split("#", 2);
      const resolved = pathPart ? decodeURIComponent(new URL(pathPart, `file://${file}`).pathname) : file;
      if (!exists(resolved)) {
        broken.push(`${file}: ${target} (no file ${resolved})`);
        continue;
      }
      const linked = MARKDOWN[resolved];
      if (anchor && linked !== undefined && !anchorsOf(linked).has(anchor.toLowerCase())) {
        broken.push(`${file}: ${target} (no heading #${anchor} in ${resolved})`);
      }
    }
  }
  return broken;
}

/** True when `text` names `path` as a whole path, not as the start of a longer one. */
function mentions(text: string, path: string): boolean {
  const escaped = path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`${escaped}(?![\\w{}/-])`).test(text);
}

describe("the documentation", () => {
  it("finds the README and the guides", () => {
    expect(Object.keys(MARKDOWN)).toEqual(expect.arrayContaining(["/README.md", "/docs/authentication.md"]));
    expect(REPOSITORY_FILES).toEqual(
      expect.arrayContaining(["/src/platform/config.ts", "/.dev.vars.example"]),
    );
  });

  it("reads links and anchors as GitHub does", () => {
    const sample = [
      "# Retries and disabling",
      "## `GET /api/x` (v2)",
      "## Notes",
      "## Notes",
      "```sh",
      "# not a heading [nor](a-link.md)",
      "```",
      "See [a](guide.md#notes-1), `[b](code.md)` and [c](https://example.com).",
      "[ref]: ./other.md",
    ].join("\n");
    expect([...anchorsOf(sample)]).toEqual(["retries-and-disabling", "get-apix-v2", "notes", "notes-1"]);
    expect(linkTargets(sample)).toEqual(["guide.md#notes-1", "https://example.com", "./other.md"]);
    expect(mentions("`GET /api/courses/{id}`", "/api/courses")).toBe(false);
    expect(mentions("`GET /api/courses?language=es`", "/api/courses")).toBe(true);
  });

  it("has no broken relative link in README.md or docs/", () => {
    expect(brokenLinks()).toEqual([]);
  });

  it("mentions every path of the OpenAPI document in some guide in docs/", async () => {
    const { res, body: document } = await callJson<{
      paths: Record<string, Record<string, { tags?: string[] }>>;
    }>("/api/openapi.json", { headers: { "CF-Connecting-IP": freshIp() } });
    expect(res.status).toBe(200);
    const paths = Object.keys(document.paths);
    expect(paths.length).toBeGreaterThan(30);
    const guideNames = GUIDES.map(([file]) => file.slice(1)).join(", ");
    const missing = paths
      .filter((path) => !GUIDES.some(([, text]) => mentions(text, path)))
      .map((path) => {
        const operations = Object.entries(document.paths[path] ?? {});
        const methods = operations.map(([method]) => method.toUpperCase()).join(", ");
        const tags = [...new Set(operations.flatMap(([, operation]) => operation.tags ?? []))].join(", ");
        return `${methods} ${path} (tag ${tags || "none"}) is mentioned in none of: ${guideNames}`;
      });
    const hint = "write each path, as the OpenAPI document spells it, into the guide of its area";
    expect(missing, hint).toEqual([]);
  });
});
