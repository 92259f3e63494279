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
 * A display string (a token's name, a webhook's description, every later one; `multiline` admits line
 * breaks and tabs, for long descriptions): trimmed, between
 * `min` and `max` characters, and free of characters that change how text around it is shown.
 * A refusal is a 422 naming the field, like every validation error.
 */
export function displayText({
  max,
  min = 1,
  multiline = false,
}: {
  max: number;
  min?: number;
  multiline?: boolean;
}) {
  let schema = z.string().trim();
  if (min > 0)
    schema = schema.min(min, min === 1 ? "must not be empty" : `must be at least ${min} characters`);
  return schema
    .max(max, `must be at most ${max} characters`)
    .refine((value) => isSafeForDisplay(value, multiline), { message: UNSAFE_TEXT_MESSAGE })
    .openapi({
      description: multiline
        ? `At most ${max} characters; line breaks and tabs allowed, no other control or bidirectional formatting characters.`
        : `At most ${max} characters; no control or bidirectional formatting characters.`,
    });
}
