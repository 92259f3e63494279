import { z } from "@hono/zod-openapi";

/**
 * C0 and C1 control characters (NUL, line breaks, escape sequences…) and the bidirectional
 * embedding, override and isolate characters (U+202A–U+202E, U+2066–U+2069), which can make a
 * name display as something else in a dashboard, a log line or a terminal.
 */
function unsafeForDisplay(code: number, multiline: boolean): boolean {
  if (multiline && (code === 0x0a || code === 0x0d || code === 0x09)) return false;
  return (
    code <= 0x1f ||
    (code >= 0x7f && code <= 0x9f) ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

export function isSafeForDisplay(value: string, multiline = false): boolean {
  for (let i = 0; i < value.length; i++) if (unsafeForDisplay(value.charCodeAt(i), multiline)) return false;
  return true;
}

export const UNSAFE_TEXT_MESSAGE =
  "must not contain control characters or bidirectional formatting characters";

/**
 * What one kind of display string allows: between `min` (default 1) and `max` characters after
 * trimming, line breaks and tabs only when `multiline`, and none of the `reserved` characters (a
 * group name's `;`, which separates groups in a CSV cell). The same rule gives the schema that
 * refuses input (`displayText`) and the sanitizer that cleans an identity provider's claims
 * (`sanitizeDisplayText`), so the two cannot drift apart.
 */
export interface DisplayTextRule {
  max: number;
  min?: number;
  multiline?: boolean;
  reserved?: string;
}

/** A person's name: a member's, an institution admin's, and whatever an LMS or identity provider sends. */
export const PERSON_NAME = { max: 200 } as const satisfies DisplayTextRule;
/** A group (class, department) of members. */
export const GROUP_NAME = { max: 100, reserved: ";" } as const satisfies DisplayTextRule;
/** A title another system gives (an LMS course's or link's title, as an LTI launch carries it). */
export const TITLE = { max: 500 } as const satisfies DisplayTextRule;
/** A member's id in the institution's own systems (SIS/HR, OneRoster `sourcedId`, SCIM `externalId`). */
export const EXTERNAL_ID = { max: 200 } as const satisfies DisplayTextRule;

/**
 * A display string (a token's name, a webhook's description, a person's or group's name, every
 * later one; `multiline` admits line breaks and tabs, for long descriptions): trimmed, between
 * `min` and `max` characters, and free of characters that change how text around it is shown.
 * A refusal is a 422 naming the field, like every validation error. Markup (`<`, `>`, `&`) is text:
 * every output escapes it for its context (JSON, HTML pages, CSV), so it is neither refused nor
 * stripped.
 */
export function displayText(
  { max, min = 1, multiline = false, reserved = "" }: DisplayTextRule,
  doc: { description?: string; example?: string } = {},
) {
  let schema = z.string().trim();
  if (min > 0)
    schema = schema.min(min, min === 1 ? "must not be empty" : `must be at least ${min} characters`);
  const rule = multiline
    ? `At most ${max} characters; line breaks and tabs allowed, no other control or bidirectional formatting characters`
    : `At most ${max} characters; no control or bidirectional formatting characters`;
  const reservedRule = [...reserved].map((ch) => `, no \`${ch}\``).join("");
  let checked = schema
    .max(max, `must be at most ${max} characters`)
    .refine((value) => isSafeForDisplay(value, multiline), { message: UNSAFE_TEXT_MESSAGE });
  for (const ch of reserved)
    checked = checked.refine((value) => !value.includes(ch), `must not contain ${ch}`);
  return checked.openapi({
    description: doc.description ? `${doc.description} ${rule}${reservedRule}.` : `${rule}${reservedRule}.`,
    ...(doc.example ? { example: doc.example } : {}),
  });
}

/** A person's name as input: refused (422 naming the field) unless it keeps `PERSON_NAME`. */
export const personName = () => displayText(PERSON_NAME, { example: "Ana Lima" });
/** A group name as input: refused (422 naming the field) unless it keeps `GROUP_NAME`. */
export const groupName = () => displayText(GROUP_NAME, { example: "class-7b" });
/** An external id as input: refused (422 naming the field) unless it keeps `EXTERNAL_ID`. */
export const externalId = (description?: string) =>
  displayText(EXTERNAL_ID, { example: "SIS-10023", ...(description ? { description } : {}) });

const LINE_BREAKS_AND_TABS = /[\t\n\v\f\r\u0085]/;

/**
 * The same rule applied to text Lingua must accept rather than refuse (an identity provider's
 * claims: an LTI launch, later SSO and SCIM): the characters the rule refuses are dropped (line
 * breaks, tabs and reserved characters become spaces), runs of white space become one space
 * (single-line rules), the ends are trimmed and the rest is cut to `max` characters (code points,
 * as the schema counts them). Null when the value is not a string or nothing is left; what it
 * answers always passes `displayText` of the same rule unchanged.
 */
export function sanitizeDisplayText(value: unknown, rule: DisplayTextRule): string | null {
  if (typeof value !== "string") return null;
  const { max, min = 1, multiline = false, reserved = "" } = rule;
  let kept = "";
  for (const ch of value) {
    const code = ch.codePointAt(0) ?? 0;
    if (reserved.includes(ch)) kept += " ";
    else if (!unsafeForDisplay(code, multiline)) kept += ch;
    else if (LINE_BREAKS_AND_TABS.test(ch)) kept += " ";
  }
  let text = (multiline ? kept : kept.replace(/\s+/g, " ")).trim();
  // Characters are code points, as the schema's length counts them: a cut never splits a surrogate pair.
  const characters = [...text];
  if (characters.length > max) text = characters.slice(0, max).join("").trim();
  return text !== "" && [...text].length >= min ? text : null;
}
