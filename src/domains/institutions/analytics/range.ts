import { addDays, DAY_MS, dayMs, dayProblem, daysBetween, formatDay, loopCap } from "../../../platform/dates";
import { type FieldError, validationError } from "../../../platform/errors";

export const GRANULARITIES = ["day", "week", "month"] as const;
export type Granularity = (typeof GRANULARITIES)[number];
export const DEFAULT_DAYS = 30;
export const MAX_DAYS = 366;
/** No series is longer than a range's days (a week or month granularity has fewer points); the margin is the partial period at each end. */
export const MAX_PERIODS = MAX_DAYS + 7;

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
  const weekday = (new Date(dayMs(day)).getUTCDay() + 6) % 7; // Monday = 0
  return addDays(day, -weekday);
}

/** The same in SQL, over a `day` column, so that D1 groups by period. */
export function periodStartSql(granularity: Granularity, column = "day"): string {
  if (granularity === "day") return column;
  if (granularity === "month") return `substr(${column}, 1, 7) || '-01'`;
  return `date(${column}, '-' || ((CAST(strftime('%w', ${column}) AS INTEGER) + 6) % 7) || ' days')`;
}

/**
 * Every period start from the one holding `from` to the one holding `to`, for a zero-filled series.
 * Days are compared as numbers; more than MAX_PERIODS points is an internal error, never a long loop.
 */
export function periodStarts(from: string, to: string, granularity: Granularity): string[] {
  const out: string[] = [];
  const end = dayMs(to);
  const tick = loopCap(MAX_PERIODS, "analytics periods");
  let current = dayMs(periodStart(from, granularity));
  while (current <= end) {
    tick();
    out.push(formatDay(current));
    if (granularity === "day") current += DAY_MS;
    else if (granularity === "week") current += 7 * DAY_MS;
    else {
      const date = new Date(current);
      date.setUTCMonth(date.getUTCMonth() + 1, 1);
      current = date.getTime();
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
    const problem = value === undefined ? null : dayProblem(value);
    if (problem) errors.push({ path: key, message: problem });
  }
  if (errors.length > 0) throw validationError(errors);
  const to = query.to ?? todayIn(timeZone, nowMs);
  const from = query.from ?? addDays(to, 1 - DEFAULT_DAYS);
  if (dayMs(from) > dayMs(to)) throw validationError([{ path: "from", message: "must not be after to" }]);
  const days = daysBetween(from, to);
  if (days > MAX_DAYS)
    throw validationError([
      { path: "from", message: `the range may span at most ${MAX_DAYS} days (it spans ${days})` },
    ]);
  return { from, to };
}

/** The last day of the period starting at `start`. */
export function periodEnd(start: string, granularity: Granularity): string {
  if (granularity === "day") return start;
  if (granularity === "week") return addDays(start, 6);
  const date = new Date(dayMs(start));
  date.setUTCMonth(date.getUTCMonth() + 1, 0);
  return formatDay(date.getTime());
}

/**
 * How the rollups answer [from, to]: the whole months inside it (read from month rows) and the day
 * intervals around them (read from day rows); the part of the range in its first and last period
 * when the range covers that period only partly (null when whole, or when the range is one period).
 */
export function splitRange(from: string, to: string, granularity: Granularity) {
  const months = periodStarts(from, to, "month").filter(
    (m) => dayMs(m) >= dayMs(from) && dayMs(periodEnd(m, "month")) <= dayMs(to),
  );
  const days: [string, string][] = [];
  const [firstMonth] = months;
  const lastMonth = months.at(-1);
  if (firstMonth === undefined || lastMonth === undefined) days.push([from, to]);
  else {
    if (dayMs(firstMonth) > dayMs(from)) days.push([from, addDays(firstMonth, -1)]);
    const after = addDays(periodEnd(lastMonth, "month"), 1);
    if (dayMs(after) <= dayMs(to)) days.push([after, to]);
  }
  const starts = periodStarts(from, to, granularity);
  const first = starts[0] ?? from;
  const last = starts.at(-1) ?? from;
  const single = starts.length === 1;
  const firstEdge: [string, string] | null =
    !single && first !== from ? [from, periodEnd(first, granularity)] : null;
  const lastEdge: [string, string] | null =
    !single && periodEnd(last, granularity) !== to ? [last, to] : null;
  return { firstPeriod: first, months, days, firstEdge, lastEdge, single };
}
