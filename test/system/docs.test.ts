/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import { ROLES } from "../../src/db/schema";
import { ACHIEVEMENTS } from "../../src/domains/progress/rules";
import { EVENT_EXAMPLES } from "../../src/domains/webhooks/catalogue";
import { ABILITIES, type Ability, ROLE_CEILINGS } from "../../src/platform/auth/abilities";
import { SETTING_NAMES } from "../../src/platform/config";
import { ERROR_CATALOGUE, type ErrorCode } from "../../src/platform/error-catalogue";
import { EVENT_TYPES } from "../../src/platform/events";
import { call, callJson } from "../helpers/api";
import { freshIp } from "../helpers/tenants";

/**
 * Keeps the documentation honest where that is cheap: every relative link in README.md and docs/
 * resolves (and its #anchor, when it points into a Markdown file), every path of the OpenAPI
 * document is mentioned in some guide, every design note is listed in the README, and the guides'
 * tables list exactly the entries of the catalogues in the code (event types, abilities, error
 * codes, configuration variables), each failure naming what is missing or extra. workerd has no
 * file system, so Vite gathers the Markdown texts and the repository's file names when it bundles
 * this test.
 */

const MARKDOWN = import.meta.glob<string>(["/README.md", "/docs/**/*.md"], {
  query: "?raw",
  import: "default",
  eager: true,
});

const WRANGLER_TOML = import.meta.glob<string>("/wrangler.toml", {
  query: "?raw",
  import: "default",
  eager: true,
})["/wrangler.toml"];

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

/** A Markdown file's text, failing clearly when the file is gone. */
function markdown(file: string): string {
  const text = MARKDOWN[file];
  if (text === undefined) throw new Error(`${file} is not found`);
  return text;
}

/**
 * The body rows of the first table under the heading `heading` (before the next heading), each as
 * its cells, trimmed. Throws, naming the file and heading, when there is no such table.
 */
function tableUnder(file: string, heading: string): string[][] {
  const text = markdown(file);
  const lines = text.split("\n");
  const start = lines.findIndex(
    (line) => /^#{1,6}\s/.test(line) && line.replace(/^#+\s+/, "").trim() === heading,
  );
  if (start < 0) throw new Error(`${file} has no heading "${heading}"`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 1)) {
    if (/^#{1,6}\s/.test(line)) break;
    const row = line.trimStart(); // a table inside a list item is indented
    if (row.startsWith("|"))
      rows.push(
        row
          .slice(1, row.lastIndexOf("|"))
          .split("|")
          .map((cell) => cell.trim()),
      );
    else if (rows.length > 0) break;
  }
  if (rows.length < 3) throw new Error(`${file} has no table under "${heading}"`);
  return rows.slice(2); // the header row and the separator row
}

/** The `code` spans of a table cell. */
const codeSpans = (cell: string | undefined) =>
  [...(cell ?? "").matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? "");

/** What a guide's table misses of a catalogue, and what it lists that the catalogue lacks. */
function compare(listed: readonly string[], catalogue: readonly string[], where: string): string[] {
  const missing = catalogue
    .filter((name) => !listed.includes(name))
    .map((name) => `${name}: no row in ${where}`);
  const extra = listed
    .filter((name) => !catalogue.includes(name))
    .map((name) => `${name}: listed in ${where}, but not in the catalogue in the code`);
  const twice = listed
    .filter((name, i) => listed.indexOf(name) !== i)
    .map((name) => `${name}: listed twice in ${where}`);
  return [...missing, ...extra, ...twice];
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

  it("lists every design note of docs/design/ in the README", () => {
    const notes = REPOSITORY_FILES.filter((file) => /^\/docs\/design\/[^/]+\.md$/.test(file));
    expect(notes.length).toBeGreaterThan(10);
    const linked = new Set(linkTargets(markdown("/README.md")).map((target) => `/${target.split("#")[0]}`));
    const unlisted = notes
      .filter((note) => !linked.has(note))
      .map((note) => `${note} is not linked from README.md`);
    expect(unlisted).toEqual([]);
  });

  it("has a row in the webhooks guide's event table for every event type, and no other, naming its data's fields", () => {
    const rows = tableUnder("/docs/webhooks.md", "Event catalogue");
    const listed = rows.flatMap((cells) => codeSpans(cells[0]));
    const problems = compare(listed, Object.keys(EVENT_TYPES), "docs/webhooks.md's event catalogue");
    // Every field of an event's `data` (the catalogue's example) is named in its row.
    for (const [type, example] of Object.entries(EVENT_EXAMPLES)) {
      const row = rows.find((cells) => codeSpans(cells[0]).includes(type));
      const named = codeSpans(row?.[2]);
      for (const field of Object.keys(example).filter((f) => row && !named.includes(f)))
        problems.push(`${type}: its data field ${field} is not named in docs/webhooks.md's event catalogue`);
    }
    expect(problems).toEqual([]);
  });

  it("has every ability in the authentication guide's table, with the roles that may hold it", () => {
    const where = "docs/authentication.md's abilities table";
    const header = markdown("/docs/authentication.md")
      .split("\n")
      .find((line) => line.startsWith("| ability"));
    const roles = (header ?? "")
      .split("|")
      .map((cell) => cell.trim())
      .slice(3, -1);
    expect(roles, `${where}: one column per role`).toEqual([...ROLES]);
    const rows = tableUnder("/docs/authentication.md", "Abilities");
    const listed = rows.flatMap((cells) => codeSpans(cells[0]));
    const problems = compare(listed, Object.keys(ABILITIES), where);
    // A role's cell is empty when the role holds none of the row's abilities, and starts with ✓ when it holds all.
    for (const cells of rows) {
      const abilities = codeSpans(cells[0]).filter((a): a is Ability => Object.hasOwn(ABILITIES, a));
      roles.forEach((role, i) => {
        const cell = cells[2 + i] ?? "";
        const held = abilities.filter((a) => ROLE_CEILINGS[role as (typeof ROLES)[number]].includes(a));
        const expected = held.length === 0 ? "empty" : held.length === abilities.length ? "✓" : "partial";
        const shown = cell === "" ? "empty" : cell.startsWith("✓") ? "✓" : "partial";
        if (expected !== shown)
          problems.push(
            `${cells[0]} for ${role}: the table shows "${cell}", the ceiling in the code says ${expected}`,
          );
      });
    }
    expect(problems).toEqual([]);
  });

  it("has every error code in the authentication guide's error table, under its status", () => {
    const where = "docs/authentication.md's error table";
    const rows = tableUnder("/docs/authentication.md", "Errors");
    const listed = rows.flatMap((cells) => codeSpans(cells[1]));
    const problems = compare(listed, Object.keys(ERROR_CATALOGUE), where);
    for (const cells of rows) {
      const statuses = (cells[0] ?? "").split(",").map((status) => Number(status.trim()));
      for (const code of codeSpans(cells[1]).filter((c): c is ErrorCode =>
        Object.hasOwn(ERROR_CATALOGUE, c),
      )) {
        const { status } = ERROR_CATALOGUE[code];
        if (!statuses.includes(status))
          problems.push(`${code}: in the row of ${cells[0]}, but its status is ${status}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("has every error code on the error reference page the worker serves", async () => {
    const res = await call("/api/docs/errors", { headers: { "CF-Connecting-IP": freshIp() } });
    expect(res.status).toBe(200);
    const html = await res.text();
    const listed = [...html.matchAll(/<section id="([^"]+)">/g)].map((m) => m[1] ?? "");
    expect(compare(listed, Object.keys(ERROR_CATALOGUE), "GET /api/docs/errors")).toEqual([]);
  });

  it("has every achievement, with its name, in the progress guide's table, and no other", () => {
    const where = "docs/progress.md's achievements table";
    const rows = tableUnder("/docs/progress.md", "The learning rules");
    const problems = compare(
      rows.flatMap((cells) => codeSpans(cells[0])),
      ACHIEVEMENTS.map((a) => a.code),
      where,
    );
    for (const achievement of ACHIEVEMENTS) {
      const row = rows.find((cells) => codeSpans(cells[0]).includes(achievement.code));
      if (row && row[1] !== achievement.name)
        problems.push(
          `${achievement.code}: named "${row[1]}" in ${where}, "${achievement.name}" in the code`,
        );
    }
    expect(problems).toEqual([]);
  });

  it("has every configuration variable in the README's configuration table, and no other, with wrangler.toml's default", () => {
    const rows = tableUnder("/README.md", "Configuration");
    const listed = rows.flatMap((cells) => codeSpans(cells[0]));
    const problems = compare(listed, SETTING_NAMES, "README.md's configuration table");
    // The default column shows wrangler.toml's [vars] value: `value` in code, or "empty".
    const vars = (WRANGLER_TOML ?? "").split(/^\[/m).find((section) => section.startsWith("vars]")) ?? "";
    for (const cells of rows) {
      const [name = ""] = codeSpans(cells[0]);
      const value = new RegExp(`^${name}\\s*=\\s*"([^"]*)"`, "m").exec(vars)?.[1];
      const shown = cells[2] ?? "";
      const [code] = codeSpans(shown);
      if (cells[1] === "secret") {
        if (value !== undefined)
          problems.push(`${name}: a secret in the README, but set in wrangler.toml [vars]`);
      } else if (value === undefined) problems.push(`${name}: not in wrangler.toml [vars]`);
      else if (code !== undefined ? code !== value : shown === "empty" ? value !== "" : false)
        problems.push(`${name}: the README's default is ${shown}, wrangler.toml [vars] says "${value}"`);
    }
    expect(problems).toEqual([]);
  });

  it("names only operations that exist, and the ability each needs, in README.md and the guides", async () => {
    const { body: document } = await callJson<{
      paths: Record<string, Record<string, { security?: unknown[]; "x-required-ability"?: string }>>;
    }>("/api/openapi.json", { headers: { "CF-Connecting-IP": freshIp() } });
    const operation = (method: string, path: string) => document.paths[path]?.[method.toLowerCase()];
    // Pages the worker serves outside the document.
    const PAGES = new Set(["GET /api/docs", "GET /api/docs/errors"]);
    const OPERATION = /`(GET|POST|PUT|PATCH|DELETE) (\/[^`\s?#]*)[^`]*`/g;
    const problems: string[] = [];
    for (const [file, text] of [["/README.md", markdown("/README.md")], ...GUIDES] as const) {
      for (const [, method = "", path = ""] of text.matchAll(OPERATION)) {
        if (!operation(method, path) && !PAGES.has(`${method} ${path}`))
          problems.push(`${file}: \`${method} ${path}\` is no operation of the OpenAPI document`);
      }
      // A table row about one operation that names abilities names the one the operation requires.
      for (const line of text.split("\n").filter((l) => l.trimStart().startsWith("|"))) {
        const cells = line.split("|").slice(1, -1);
        const named = [...(cells[0] ?? "").matchAll(OPERATION)];
        if (named.length !== 1) continue;
        const [, method = "", path = ""] = named[0] ?? [];
        const op = operation(method, path);
        if (!op) continue;
        const rest = cells.slice(1).join("|");
        const abilities = codeSpans(rest).filter((name) => Object.hasOwn(ABILITIES, name));
        const required = op["x-required-ability"];
        if (abilities.length > 0 && required && !abilities.includes(required))
          problems.push(
            `${file}: the row of ${method} ${path} names ${abilities.join(", ")}, but it requires ${required}`,
          );
        const isPublic = (op.security ?? []).length === 0;
        if (/\bno token\b/.test(rest) && !isPublic)
          problems.push(`${file}: the row of ${method} ${path} says "no token", but it requires one`);
      }
    }
    expect(problems).toEqual([]);
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
