import { z } from "@hono/zod-openapi";

/**
 * Dates and date-times that come from a request, written once.
 *
 * Every calendar-day parameter (`YYYY-MM-DD`) and every date-time parameter (ISO 8601 with an
 * offset) of the API is one of the two schemas below: a real date, between 2000-01-01 and
 * 2100-12-31 (UTC) inclusive. Anything else — an impossible day (2026-02-30, 2026-13-45), a year
 * outside the range (9999-12-31), a shape that is not a date — is a 422 naming the parameter, and
 * nothing here throws on nonsense. Ranges derived from those days are walked with numbers (the
 * milliseconds of each day), never by comparing strings, and every such loop is capped: see
 * `loopCap`.
 */

export const MIN_DAY = "2000-01-01";
export const MAX_DAY = "2100-12-31";
export const DAY_MS = 86_400_000;
/** 2000-01-01T00:00:00Z. */
export const MIN_INSTANT_MS = Date.UTC(2000, 0, 1);
/** 2100-12-31T23:59:59.999Z: the end of MAX_DAY. */
export const MAX_INSTANT_MS = Date.UTC(2101, 0, 1) - 1;
/** Days from MIN_DAY to MAX_DAY, both included (36,890): no loop over accepted days is longer. */
export const MAX_SPAN_DAYS = Math.round((Date.UTC(2100, 11, 31) - MIN_INSTANT_MS) / DAY_MS) + 1;

export const DAY_MESSAGE = "must be a calendar day as YYYY-MM-DD";
export const DAY_RANGE_MESSAGE = `must be between ${MIN_DAY} and ${MAX_DAY}`;
export const DATE_TIME_MESSAGE = "must be an ISO 8601 date-time";
export const DATE_TIME_RANGE_MESSAGE = `must be between ${MIN_DAY}T00:00:00Z and ${MAX_DAY}T23:59:59Z`;

const DAY_SHAPE = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * The UTC midnight (ms) of a real calendar day written `YYYY-MM-DD`, whatever its year; null for
 * anything else (2026-02-30, 2026-13-45, 2026-1-5, "yesterday"). Never throws.
 */
export function parseDay(value: string): number | null {
  const match = DAY_SHAPE.exec(value);
  if (!match) return null;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  if (month < 1 || month > 12 || day < 1 || day > 31) return null;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day); // setUTCFullYear, unlike Date.UTC, keeps years 0–99
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day)
    return null;
  return date.getTime();
}

/** Why `value` is not an accepted calendar day, or null when it is one (between MIN_DAY and MAX_DAY). */
export function dayProblem(value: string): string | null {
  const ms = parseDay(value);
  if (ms === null) return DAY_MESSAGE;
  if (ms < MIN_INSTANT_MS || ms > MAX_INSTANT_MS) return DAY_RANGE_MESSAGE;
  return null;
}

/** The UTC midnight of a day the product already holds (validated, or computed from one); throws if it is none. */
export function dayMs(day: string): number {
  const ms = parseDay(day);
  if (ms === null) throw new Error(`not a calendar day: ${JSON.stringify(day.slice(0, 40))}`);
  return ms;
}

/** `YYYY-MM-DD` of the UTC day holding `ms`; throws (an internal error) outside years 0–9999. */
export function formatDay(ms: number): string {
  const date = new Date(ms);
  const year = date.getUTCFullYear();
  if (!Number.isFinite(ms) || year < 0 || year > 9999) throw new Error(`day out of range: ${ms}`);
  return `${String(year).padStart(4, "0")}-${String(date.getUTCMonth() + 1).padStart(2, "0")}-${String(date.getUTCDate()).padStart(2, "0")}`;
}

/** The day `days` after `day` (before, when negative). */
export function addDays(day: string, days: number): string {
  return formatDay(dayMs(day) + days * DAY_MS);
}

/** Days from `from` to `to`, both included (0 or less when `to` is before `from`). */
export function daysBetween(from: string, to: string): number {
  return Math.round((dayMs(to) - dayMs(from)) / DAY_MS) + 1;
}

/**
 * A counter for a loop whose bound comes from a request: call it once per iteration; past `cap`
 * iterations it throws, so that a range that escaped validation fails as a 500 instead of looping
 * until the isolate runs out of memory. The cap is derived from the range's validated maximum.
 */
export function loopCap(cap: number, what: string): () => void {
  let iterations = 0;
  return () => {
    iterations += 1;
    if (iterations > cap) throw new Error(`${what}: more than ${cap} iterations`);
  };
}

const openapiDay = { format: "date", example: "2026-11-21" } as const;

/**
 * A calendar-day parameter: `YYYY-MM-DD`, a real day between MIN_DAY and MAX_DAY. The wire value
 * stays the string; `parseDay`/`dayMs` give its number.
 */
export function calendarDay() {
  return z
    .string()
    .superRefine((value, ctx) => {
      const problem = dayProblem(value);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .openapi(openapiDay);
}

/** The milliseconds of an accepted date-time, or null. Never throws. */
function instantMs(value: string): number | null {
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : null;
}

/**
 * A date-time parameter: ISO 8601 with `Z` or an offset, an instant between
 * 2000-01-01T00:00:00Z and 2100-12-31T23:59:59.999Z.
 */
export function dateTime() {
  return z.iso
    .datetime({ offset: true, message: DATE_TIME_MESSAGE })
    .refine(
      (value) => {
        const ms = instantMs(value);
        // A value the format check already refused is not reported twice.
        return ms === null || (ms >= MIN_INSTANT_MS && ms <= MAX_INSTANT_MS);
      },
      { message: DATE_TIME_RANGE_MESSAGE },
    )
    .openapi({ example: "2026-11-21T09:30:00Z" });
}

/** Descriptions end with this, so that the OpenAPI document states the bounds. */
export const DAY_BOUNDS_NOTE = `A calendar day as \`YYYY-MM-DD\` between ${MIN_DAY} and ${MAX_DAY}.`;
export const DATE_TIME_BOUNDS_NOTE = `An ISO 8601 date-time (\`Z\` or an offset) between ${MIN_DAY}T00:00:00Z and ${MAX_DAY}T23:59:59Z.`;
