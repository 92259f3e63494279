import { ScimError } from "../errors";

/**
 * SCIM filters (RFC 7644 §3.4.2.2), parsed by scimmy's `Filter` (loaded on the first filtered list)
 * and narrowed to what the service answers: equality on the attributes an identity provider looks
 * people and groups up by, joined with `and` and `or`. Anything else is 400 `invalidFilter` naming
 * what is supported, rather than a list that silently ignores part of the filter.
 */

/** One `attribute eq value` test: the attribute in lower case, dotted (`emails.value`, `members.value`). */
export interface Equality {
  attribute: string;
  value: string | boolean | number | null;
}

/** The filter as a disjunction of conjunctions: a resource matches if every test of one conjunction holds. */
export type ParsedFilter = Equality[][];

export const USER_FILTER_ATTRIBUTES = [
  "id",
  "username",
  "externalid",
  "emails.value",
  "displayname",
  "active",
] as const;
export const GROUP_FILTER_ATTRIBUTES = ["id", "displayname", "externalid", "members.value"] as const;

const SPELLING: Record<string, string> = {
  id: "id",
  username: "userName",
  externalid: "externalId",
  "emails.value": 'emails.value (or emails[type eq "work"].value)',
  displayname: "displayName",
  active: "active",
  "members.value": 'members.value (or members[value eq "…"])',
};

function unsupported(expression: string, supported: readonly string[]): ScimError {
  return new ScimError(
    400,
    `The filter \`${expression}\` is not supported: use \`eq\` on ${supported.map((a) => SPELLING[a]).join(", ")}, joined with \`and\` or \`or\`.`,
    "invalidFilter",
  );
}

type Comparison = [string, ...unknown[]];

function isComparison(node: unknown): node is Comparison {
  return Array.isArray(node) && typeof node[0] === "string";
}

/** Flattens one conjunction of scimmy's expression objects into equality tests; null if it holds anything else. */
function conjunction(node: Record<string, unknown>, prefix = ""): Equality[] | null {
  const tests: Equality[] = [];
  for (const [key, value] of Object.entries(node)) {
    const attribute = `${prefix}${key.toLowerCase()}`;
    if (isComparison(value)) {
      if (value.length !== 2 || value[0].toLowerCase() !== "eq") return null;
      const operand = value[1];
      if (operand !== null && !["string", "boolean", "number"].includes(typeof operand)) return null;
      tests.push({ attribute, value: operand as Equality["value"] });
    } else if (value && typeof value === "object" && !Array.isArray(value) && prefix === "") {
      const nested = conjunction(value as Record<string, unknown>, `${attribute}.`);
      if (!nested) return null;
      tests.push(...nested);
    } else {
      return null;
    }
  }
  return tests;
}

export async function parseFilter(expression: string, supported: readonly string[]): Promise<ParsedFilter> {
  if (expression.length > 1000)
    throw new ScimError(400, "The filter is longer than 1,000 characters.", "invalidFilter");
  const { Filter } = await import("scimmy/types");
  let parsed: unknown[];
  try {
    parsed = [...new Filter(expression)];
  } catch (error) {
    throw new ScimError(
      400,
      `The filter could not be parsed: ${error instanceof Error ? error.message : String(error)}`,
      "invalidFilter",
    );
  }
  const out: ParsedFilter = [];
  for (const node of parsed) {
    if (!node || typeof node !== "object" || Array.isArray(node)) throw unsupported(expression, supported);
    const tests = conjunction(node as Record<string, unknown>);
    if (!tests || tests.length === 0) throw unsupported(expression, supported);
    // `emails[type eq "work"]`: the only type an address is matched under (every address we hold is a work address).
    const kept: Equality[] = [];
    for (const test of tests) {
      if (test.attribute === "emails.type") {
        if (typeof test.value !== "string" || test.value.toLowerCase() !== "work")
          throw unsupported(expression, supported);
        continue;
      }
      if (!supported.includes(test.attribute)) throw unsupported(expression, supported);
      kept.push(test);
    }
    if (kept.length === 0) throw unsupported(expression, supported);
    out.push(kept);
  }
  if (out.length > 20)
    throw new ScimError(400, "The filter joins more than 20 alternatives with `or`.", "invalidFilter");
  return out;
}
