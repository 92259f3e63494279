import { describe, expect, it } from "vitest";

/**
 * The domain layer does each cross-cutting thing one way (docs/design/service-context.md): a rule
 * broken in a new file fails here, naming the file and the line, so the next domain copies the
 * mechanism rather than whatever it happened to find first.
 */
const SOURCES = import.meta.glob<string>("/src/domains/**/*.ts", {
  query: "?raw",
  import: "default",
  eager: true,
});

interface Rule {
  name: string;
  pattern: RegExp;
  /** Files where the pattern is the rule, not a breach of it. */
  allowedIn?: (path: string) => boolean;
}

const isSqlFile = (path: string) => /\/sql\.ts$/.test(path);
const isPolicyFile = (path: string) => /\/policy\.ts$/.test(path);

const RULES: Rule[] = [
  { name: "a database client of its own (use ctx.db)", pattern: /\bdatabase\(/ },
  {
    name: "the D1 binding read from env (use ctx.db, or ctx.d1 for raw statements)",
    pattern: /\benv\.DB\b/,
  },
  { name: "a binding outside the service context (use ctx.env)", pattern: /\bc\.env\b/ },
  { name: "settings parsed in a domain (use ctx.config)", pattern: /\bconfig\((?:c\.)?env\)/ },
  { name: "the system clock (use ctx.now())", pattern: /\bDate\.now\(\)|\bnowIso\(\)/ },
  {
    name: "an outbox row written by hand (use commit)",
    pattern: /insert\(outboxEvents\)|INSERT INTO outbox_events/,
  },
  { name: "events published by hand (commit publishes)", pattern: /\bpublishEvents\(|\bEVENTS_QUEUE\b/ },
  {
    name: "raw SQL outside the domain's sql.ts",
    pattern: /(?:=|\()\s*[`"]\s*(?:SELECT|INSERT|UPDATE|DELETE|WITH)\s/,
    allowedIn: isSqlFile,
  },
  {
    // A principal's role (`principal.user.role`), not a member's data (a bulk plan counting admins).
    name: "a caller's role checked outside the domain's policy.ts",
    pattern: /\buser\.role\s*[!=]==|[!=]==\s*[\w.]*\buser\.role\b|includes\([\w.]*\buser\.role\)/,
    allowedIn: isPolicyFile,
  },
];

function breaches(rule: Rule): string[] {
  const found: string[] = [];
  for (const [path, text] of Object.entries(SOURCES)) {
    if (rule.allowedIn?.(path)) continue;
    text.split("\n").forEach((line, i) => {
      if (/^\s*(\/\/|\*)/.test(line)) return;
      if (rule.pattern.test(line)) found.push(`${path}:${i + 1}: ${line.trim()}`);
    });
  }
  return found;
}

describe("one way to do each thing in src/domains", () => {
  for (const rule of RULES) {
    it(`no ${rule.name}`, () => {
      expect(breaches(rule)).toEqual([]);
    });
  }

  it("one operation per route file", () => {
    const crowded = Object.entries(SOURCES)
      .filter(([path]) => /\/routes\/[^/]+\.ts$/.test(path))
      .filter(([, text]) => (text.match(/\bapp\.openapi\(/g) ?? []).length > 1)
      .map(([path]) => path);
    expect(crowded).toEqual([]);
  });
});

/**
 * Every query runs in a D1 session (docs/design/d1-sessions.md): the service context opens one per
 * invocation, and the few platform parts that read without a context (the token gate's record, the
 * principal invalidation) open their own with `withSession`. Nothing outside src/platform/ names the
 * binding, and inside it the binding is only ever asked for a session, or handed to the context's.
 */
const ALL_SOURCES = import.meta.glob<string>("/src/**/*.{ts,tsx}", {
  query: "?raw",
  import: "default",
  eager: true,
});

function linesMatching(pattern: RegExp, files: (path: string) => boolean): string[] {
  const found: string[] = [];
  for (const [path, text] of Object.entries(ALL_SOURCES)) {
    if (!files(path)) continue;
    text.split("\n").forEach((line, i) => {
      if (/^\s*(\/\/|\*)/.test(line)) return;
      if (pattern.test(line)) found.push(`${path}:${i + 1}: ${line.trim()}`);
    });
  }
  return found;
}

describe("every query in a D1 session", () => {
  it("no env.DB outside src/platform/ (use ctx.db, or ctx.d1 for raw statements)", () => {
    expect(linesMatching(/\bDB\b(?!_)/, (path) => !path.startsWith("/src/platform/"))).toEqual([]);
  });

  it("in src/platform/, the binding only asked for a session (or handed to the service context's)", () => {
    expect(
      linesMatching(/\.DB\b(?!\.withSession\()/, (path) => path !== "/src/platform/service/context.ts"),
    ).toEqual([]);
  });
});
