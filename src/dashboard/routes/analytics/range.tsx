import { GRANULARITIES, type Granularity, MAX_DAYS } from "../../../domains/institutions/analytics/range";
import { addDays, dayProblem, daysBetween } from "../../../platform/dates";
import { ErrorSummary } from "../../layout";
import { ANALYTICS_PATH } from "../../prefixes";

/** The range picker: presets, a custom range, the points and the group, read from a GET form. */
/** The range presets of the picker: days up to today (in the institution's time zone). */
const PRESETS = [
  { value: "7", label: "Last 7 days" },
  { value: "30", label: "Last 30 days" },
  { value: "90", label: "Last 90 days" },
  { value: "365", label: "Last 12 months" },
  { value: "custom", label: "Custom range" },
] as const;
const DEFAULT_PRESET = "30";
const GRANULARITY_LABELS: Record<Granularity | "auto", string> = {
  auto: "Automatic",
  day: "By day",
  week: "By week",
  month: "By month",
};
export const LABELS = { from: "From", to: "To", granularity: "Points", group: "Group", preset: "Range" };

export interface RangeForm {
  preset: string;
  from: string;
  to: string;
  granularity: Granularity | "auto";
  group: string;
  print: boolean;
}

export function formFrom(query: Record<string, string | undefined>): RangeForm {
  const preset = PRESETS.some((p) => p.value === query.preset) ? (query.preset as string) : "";
  const custom = Boolean(query.from || query.to);
  const granularity = (GRANULARITIES as readonly string[]).includes(query.granularity ?? "")
    ? (query.granularity as Granularity)
    : "auto";
  return {
    // Dates without a preset are a custom range (a shared link); neither: the default preset.
    preset: preset || (custom ? "custom" : DEFAULT_PRESET),
    from: (query.from ?? "").trim(),
    to: (query.to ?? "").trim(),
    granularity,
    group: (query.group ?? "").trim().slice(0, 200),
    print: query.view === "print",
  };
}

/** Days of the range the form asks for, or the errors to show next to its fields. */
export function resolveForm(
  form: RangeForm,
  today: string,
): { from: string; to: string } | { errors: string[] } {
  if (form.preset !== "custom") {
    const days = Number(form.preset);
    return { from: addDays(today, 1 - days), to: today };
  }
  const errors: string[] = [];
  if (!form.from) errors.push(`${LABELS.from}: choose the first day of a custom range`);
  if (!form.to) errors.push(`${LABELS.to}: choose the last day of a custom range`);
  for (const key of ["from", "to"] as const) {
    const problem = form[key] ? dayProblem(form[key]) : null;
    if (problem) errors.push(`${LABELS[key]}: ${problem}`);
  }
  if (errors.length > 0) return { errors };
  return { from: form.from, to: form.to };
}

/** Day points up to two months, then weeks up to half a year, then months: never an unreadable chart. */
export function autoGranularity(from: string, to: string): Granularity {
  const days = daysBetween(from, to);
  return days <= 62 ? "day" : days <= 183 ? "week" : "month";
}

export function rangeQuery(form: RangeForm, extra: Record<string, string> = {}): string {
  const query: Record<string, string> = { preset: form.preset };
  if (form.preset === "custom") Object.assign(query, { from: form.from, to: form.to });
  if (form.granularity !== "auto") query.granularity = form.granularity;
  if (form.group) query.group = form.group;
  return new URLSearchParams({ ...query, ...extra }).toString();
}

export function RangePicker({
  form,
  groups,
  errors,
  range,
}: {
  form: RangeForm;
  groups: string[];
  errors: string[];
  range: { from: string; to: string } | null;
}) {
  const groupNames = [...new Set([...groups, ...(form.group ? [form.group] : [])])].sort();
  return (
    <form method="get" action={ANALYTICS_PATH} class="card range-picker" aria-labelledby="range-heading">
      <h2 id="range-heading" class="visually-hidden">
        Date range
      </h2>
      <ErrorSummary errors={errors} />
      <div class="range-fields">
        <div>
          <label for="preset">{LABELS.preset}</label>
          <select id="preset" name="preset" data-toggles="custom-range" data-toggle-value="custom">
            {PRESETS.map((p) => (
              <option value={p.value} selected={form.preset === p.value}>
                {p.label}
              </option>
            ))}
          </select>
        </div>
        <fieldset id="custom-range" class="range-custom">
          <legend>Custom range</legend>
          <div>
            <label for="from">{LABELS.from}</label>
            <input id="from" name="from" type="date" value={form.from || range?.from || ""} />
          </div>
          <div>
            <label for="to">{LABELS.to}</label>
            <input id="to" name="to" type="date" value={form.to || range?.to || ""} />
          </div>
        </fieldset>
        <div>
          <label for="granularity">{LABELS.granularity}</label>
          <select id="granularity" name="granularity">
            {(["auto", ...GRANULARITIES] as const).map((g) => (
              <option value={g === "auto" ? "" : g} selected={form.granularity === g}>
                {GRANULARITY_LABELS[g]}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="group">{LABELS.group}</label>
          <select id="group" name="group">
            <option value="">All members</option>
            {groupNames.map((g) => (
              <option value={g} selected={form.group === g}>
                {g}
              </option>
            ))}
          </select>
        </div>
      </div>
      <p class="hint">
        Days are your learners' own calendar days; presets end today in your institution's time zone. At most{" "}
        {MAX_DAYS} days.
      </p>
      <div class="actions">
        <button type="submit">Show</button>
      </div>
    </form>
  );
}
