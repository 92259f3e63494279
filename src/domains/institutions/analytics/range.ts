import { type FieldError, validationError } from "../../../platform/errors";

export const GRANULARITIES = ["day", "week", "month"] as const;
export type Granularity = (typeof GRANULARITIES)[number];
export const DEFAULT_DAYS = 30;
export const MAX_DAYS = 366;

const DAY_MS = 86_400_000;

function toMs(day: string): number {
  return Date.parse(`${day}T00:00:00Z`);
}

export function addDays(day: string, days: number): string {
  return new Date(toMs(day) + days * DAY_MS).toISOString().slice(0, 10);
}

/** A real calendar day in `YYYY-MM-DD` (not 2026-02-30). */
export function isCalendarDay(value: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(value) && new Date(toMs(value)).toISOString().slice(0, 10) === value;
}

/** Today in an IANA time zone. */
export function todayIn(timeZone: string, nowMs: number): string {
  try {
    return new Intl.DateTimeFormat("en-CA", {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
    }).format(nowMs);
  } catch {
    return new Date(nowMs).toISOString().slice(0, 10);
  }
}

/** The first day of the period holding `day`: itself, its week's Monday, or its month's first. */
export function periodStart(day: string, granularity: Granularity): string {
  if (granularity === "day") return day;
  if (granularity === "month") return `${day.slice(0, 7)}-01`;
  const weekday = (new Date(toMs(day)).getUTCDay() + 6) % 7; // Monday = 0
  return addDays(day, -weekday);
}

/** The same in SQL, over a `day` column, so that D1 groups by period. */
export function periodStartSql(granularity: Granularity, column = "day"): string {
  if (granularity === "day") return column;
  if (granularity === "month") return `substr(${column}, 1, 7) || '-01'`;
  return `date(${column}, '-' || ((CAST(strftime('%w', ${column}) AS INTEGER) + 6) % 7) || ' days')`;
}

/** Every period start from the one holding `from` to the one holding `to`, for a zero-filled series. */
export function periodStarts(from: string, to: string, granularity: Granularity): string[] {
  const out: string[] = [];
  let current = periodStart(from, granularity);
  while (current <= to) {
    out.push(current);
    if (granularity === "day") current = addDays(current, 1);
    else if (granularity === "week") current = addDays(current, 7);
    else {
      const [year, month] = current.split("-").map(Number) as [number, number];
      current = month === 12 ? `${year + 1}-01-01` : `${year}-${String(month + 1).padStart(2, "0")}-01`;
    }
  }
  return out;
}

/** The range asked for, its defaults filled in (the last 30 days up to today in the institution's zone). */
export function resolveRange(
  query: { from?: string; to?: string },
  timeZone: string,
  nowMs: number,
): { from: string; to: string } {
  const errors: FieldError[] = [];
  for (const key of ["from", "to"] as const) {
    const value = query[key];
    if (value !== undefined && !isCalendarDay(value))
      errors.push({ path: key, message: "must be a calendar day as YYYY-MM-DD" });
  }
  if (errors.length > 0) throw validationError(errors);
  const to = query.to ?? todayIn(timeZone, nowMs);
  const from = query.from ?? addDays(to, 1 - DEFAULT_DAYS);
  if (from > to) throw validationError([{ path: "from", message: "must not be after to" }]);
  const days = Math.round((toMs(to) - toMs(from)) / DAY_MS) + 1;
  if (days > MAX_DAYS)
    throw validationError([
      { path: "from", message: `the range may span at most ${MAX_DAYS} days (it spans ${days})` },
    ]);
  return { from, to };
}
