import type { Child } from "hono/jsx";
import { CEFR_LEVELS, SKILLS } from "../../../db/schema";
import type { Granularity } from "../../../domains/institutions/analytics/range";
import type { readAnalytics } from "../../../domains/institutions/analytics/service";
import { CSS_URL, JS_URL } from "../../assets";
import { When } from "../../layout";
import { CategoryBarChart } from "../../pages/charts/category-bars";
import { StackedShareChart } from "../../pages/charts/stacked-share";
import { TimeSeriesChart } from "../../pages/charts/time-series";
import { AA_GRAPHICS, ramp, readableOnWhite } from "../../pages/colours";
import { ANALYTICS_PATH } from "../../prefixes";
import { type RangeForm, rangeQuery } from "./range";
import { themeOf, themeUrl } from "./theme";

/** What the analytics page shows: the key figures, the charts, the branded band and the print view. */
const SKILL_LABELS: Record<(typeof SKILLS)[number], string> = {
  reading: "Reading",
  listening: "Listening",
  writing: "Writing",
  speaking: "Speaking",
  vocabulary: "Vocabulary",
  grammar: "Grammar",
};

export type Analytics = Extract<Awaited<ReturnType<typeof readAnalytics>>, { status: 200 }>["body"];

function numberFormat(locale: string, digits = 0) {
  let format: Intl.NumberFormat;
  try {
    format = new Intl.NumberFormat(locale, { maximumFractionDigits: digits });
  } catch {
    format = new Intl.NumberFormat("en", { maximumFractionDigits: digits });
  }
  return (n: number) => format.format(n);
}

function periodLabeller(locale: string, granularity: Granularity) {
  const options: Intl.DateTimeFormatOptions =
    granularity === "month"
      ? { month: "short", year: "numeric", timeZone: "UTC" }
      : { day: "numeric", month: "short", timeZone: "UTC" };
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat(locale, options);
  } catch {
    format = new Intl.DateTimeFormat("en", options);
  }
  return (day: string) => format.format(new Date(`${day}T00:00:00Z`));
}

function Kpis({
  data,
  fmt,
  fmt1,
}: {
  data: Analytics;
  fmt: (n: number) => string;
  fmt1: (n: number) => string;
}) {
  const t = data.totals;
  const items: [string, string, string][] = [
    ["Active learners", fmt(t.active_learners), "members with at least one attempt in the range"],
    ["Practice minutes", fmt1(t.minutes), "time spent practising"],
    ["Lessons completed", fmt(t.lessons_completed), ""],
    ["Courses completed", fmt(t.courses_completed), ""],
    ["Attempts", fmt(t.attempts), ""],
    ["Members", fmt(t.members), "now, any role and status"],
  ];
  return (
    <ul class="kpis" aria-label="Totals of the range">
      {items.map(([label, value, hint]) => (
        <li class="kpi">
          <strong>{value}</strong>
          <span>{label}</span>
          {hint ? <small>{hint}</small> : null}
        </li>
      ))}
    </ul>
  );
}

/** In a chart's place when it has nothing to draw: its title and what would fill it. */
function NoChart({ title, children }: { title: string; children: Child }) {
  return (
    <div class="card empty">
      <h3>{title}</h3>
      <p>{children}</p>
    </div>
  );
}

export function Charts({
  data,
  locale,
  print = false,
}: {
  data: Analytics;
  locale: string;
  print?: boolean;
}) {
  const theme = themeOf(data.institution.branding);
  const primary = readableOnWhite(theme.primary);
  // Bars in the accent colour are graphics: at least 3:1 against white (WCAG 1.4.11), darkened if lighter.
  const accent = readableOnWhite(theme.accent, AA_GRAPHICS);
  const fmt = numberFormat(locale);
  const fmt1 = numberFormat(locale, 1);
  const label = periodLabeller(locale, data.range.granularity);
  const periodName = { day: "Day", week: "Week starting", month: "Month" }[data.range.granularity];
  const series = (pick: (p: Analytics["series"][number]) => number) =>
    data.series.map((p) => ({ label: label(p.date), value: pick(p) }));
  const span = `${data.range.from} to ${data.range.to}`;
  const peak = (values: number[]) => Math.max(0, ...values);
  const levels = [...CEFR_LEVELS, "none"] as const;
  const colours = [...ramp(theme.primary, CEFR_LEVELS.length), "#c4c9d4"];
  const levelKeys = levels.map((level, i) => ({
    key: level,
    label: level === "none" ? "Not yet" : level,
    colour: colours[i] as string,
  }));
  const stackOf = (name: string, counts: Record<(typeof levels)[number], number>) => ({
    label: name,
    segments: levelKeys.map((k) => ({ key: k.key, value: counts[k.key], colour: k.colour })),
  });
  const learnerTotal = levels.reduce((sum, l) => sum + data.cefr_distribution.overall[l], 0);
  return (
    <>
      <Kpis data={data} fmt={fmt} fmt1={fmt1} />
      <div class="charts">
        <TimeSeriesChart
          frame={{
            open: print,
            id: "chart-active",
            title: "Active learners",
            desc: `Distinct learners with at least one attempt per ${data.range.granularity}, ${span}: ${fmt(data.totals.active_learners)} in the whole range, at most ${fmt(peak(data.series.map((p) => p.active_learners)))} in one ${data.range.granularity}.`,
          }}
          points={series((p) => p.active_learners)}
          kind="line"
          colour={primary}
          format={fmt}
          valueLabel="Active learners"
          periodLabel={periodName}
        />
        <TimeSeriesChart
          frame={{
            open: print,
            id: "chart-minutes",
            title: "Practice minutes",
            desc: `Minutes of practice per ${data.range.granularity}, ${span}: ${fmt1(data.totals.minutes)} in all.`,
          }}
          points={series((p) => p.minutes)}
          kind="bar"
          colour={primary}
          format={fmt1}
          valueLabel="Minutes"
          periodLabel={periodName}
        />
        <TimeSeriesChart
          frame={{
            open: print,
            id: "chart-completions",
            title: "Lessons completed",
            desc: `Lessons completed per ${data.range.granularity}, ${span}: ${fmt(data.totals.lessons_completed)} lessons and ${fmt(data.totals.courses_completed)} courses in all.`,
          }}
          points={series((p) => p.lessons_completed)}
          kind="bar"
          colour={accent}
          format={fmt}
          valueLabel="Lessons completed"
          periodLabel={periodName}
        />
        <StackedShareChart
          frame={{
            open: print,
            id: "chart-cefr",
            title: "CEFR levels by skill",
            desc: `The current CEFR level of each of the ${fmt(learnerTotal)} learners, overall and per skill, as shares from A1 to C2; “Not yet”: no level established.`,
          }}
          stacks={[
            stackOf("Overall", data.cefr_distribution.overall),
            ...SKILLS.map((s) => stackOf(SKILL_LABELS[s], data.cefr_distribution.skills[s])),
          ]}
          keys={levelKeys}
          format={fmt}
          rowLabel="Skill"
        />
        {data.top_courses.length === 0 ? (
          <NoChart title="Top courses">
            No course had activity in this range. Courses appear here as your learners practise them.
          </NoChart>
        ) : (
          <CategoryBarChart
            frame={{
              open: print,
              id: "chart-courses",
              title: "Top courses",
              desc: `The ${data.top_courses.length} courses with the most active learners, ${span}.`,
            }}
            rows={data.top_courses.map((c) => ({ label: c.title, value: c.active_learners }))}
            colour={primary}
            format={fmt}
            categoryLabel="Course"
            valueLabel="Active learners"
            extraColumns={[
              { head: "Completions", cells: data.top_courses.map((c) => fmt(c.completions)) },
              { head: "Lessons completed", cells: data.top_courses.map((c) => fmt(c.lessons_completed)) },
              { head: "Minutes", cells: data.top_courses.map((c) => fmt1(c.minutes)) },
            ]}
          />
        )}
        {data.groups.length === 0 ? (
          <NoChart title="Groups">
            No member is in a group yet. Give members groups (classes, departments) to compare them here.
          </NoChart>
        ) : (
          <CategoryBarChart
            frame={{
              open: print,
              id: "chart-groups",
              title: "Groups",
              desc: `Active learners per group, ${span}, of ${data.groups.length} groups.`,
            }}
            rows={data.groups.map((g) => ({ label: g.name, value: g.active_learners }))}
            colour={accent}
            format={fmt}
            categoryLabel="Group"
            valueLabel="Active learners"
            extraColumns={[
              { head: "Members", cells: data.groups.map((g) => fmt(g.members)) },
              { head: "Minutes", cells: data.groups.map((g) => fmt1(g.minutes)) },
              { head: "Lessons completed", cells: data.groups.map((g) => fmt(g.lessons_completed)) },
              { head: "Courses completed", cells: data.groups.map((g) => fmt(g.courses_completed)) },
            ]}
          />
        )}
      </div>
    </>
  );
}

export function BrandBand({ data, form }: { data: Analytics; form: RangeForm }) {
  const b = data.institution.branding;
  const title = b.display_name ?? data.institution.name;
  return (
    <header class="brand-band">
      {b.logo_url ? <img class="logo" src={b.logo_url} alt={`${title} logo`} height="48" /> : null}
      <div>
        <h1>{`${title} · Analytics`}</h1>
        <p>
          {`${data.range.from} to ${data.range.to}`}
          {data.range.group ? ` · ${data.range.group}` : ""} · as of <When iso={data.generated_at} />
        </p>
      </div>
      {form.print ? null : (
        <p class="band-actions">
          <a href={`${ANALYTICS_PATH}?${rangeQuery(form, { view: "print" })}`}>Print view</a>
        </p>
      )}
    </header>
  );
}

/** The print view: the branded figures and every table, without the dashboard's frame or the form. */
export function PrintPage({
  nonce,
  theme,
  data,
  form,
  locale,
}: {
  nonce: string;
  theme: { primary: string; accent: string };
  data: Analytics;
  form: RangeForm;
  locale: string;
}) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>{`${data.institution.branding.display_name ?? data.institution.name} analytics ${data.range.from} to ${data.range.to}`}</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href={CSS_URL} />
        <link rel="stylesheet" href={themeUrl(theme)} />
        <script src={JS_URL} nonce={nonce} defer />
      </head>
      <body class="branded print-view">
        <main id="content" tabindex={-1}>
          <p class="actions no-print">
            <a href={`${ANALYTICS_PATH}?${rangeQuery(form)}`}>Back to the dashboard</a>
            <button type="button" data-print="" hidden>
              Print
            </button>
          </p>
          <BrandBand data={data} form={form} />
          <Charts data={data} locale={locale} print />
        </main>
      </body>
    </html>
  );
}
