import type { Context, Hono } from "hono";
import type { Child } from "hono/jsx";
import { CEFR_LEVELS, SKILLS } from "../../db/schema";
import {
  GRANULARITIES,
  type Granularity,
  MAX_DAYS,
  todayIn,
} from "../../domains/institutions/analytics/range";
import { readAnalytics } from "../../domains/institutions/analytics/service";
import { getInstitution } from "../../domains/institutions/service";
import type { AppEnv } from "../../env";
import { enforce, holdsAbility } from "../../platform/auth/policy";
import { addDays, dayProblem, daysBetween } from "../../platform/dates";
import { ApiError } from "../../platform/errors";
import { CSS_URL, JS_URL } from "../assets";
import { fieldMessages } from "../forms";
import { contentSecurityPolicy, html } from "../http";
import { ErrorSummary, Layout, When } from "../layout";
import { CategoryBarChart, StackedShareChart, TimeSeriesChart } from "../pages/charts";
import {
  AA_GRAPHICS,
  DEFAULT_ACCENT,
  DEFAULT_PRIMARY,
  inkOn,
  isHexColour,
  ramp,
  readableOnWhite,
} from "../pages/colours";
import { ANALYTICS_PATH, INSTITUTIONS_PATH } from "../prefixes";
import { signedIn } from "../session";

const SECTION = "analytics";
export const ANALYTICS_THEME_PATH = `${ANALYTICS_PATH}/theme.css`;

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
const LABELS = { from: "From", to: "To", granularity: "Points", group: "Group", preset: "Range" };
const SKILL_LABELS: Record<(typeof SKILLS)[number], string> = {
  reading: "Reading",
  listening: "Listening",
  writing: "Writing",
  speaking: "Speaking",
  vocabulary: "Vocabulary",
  grammar: "Grammar",
};

type Analytics = Extract<Awaited<ReturnType<typeof readAnalytics>>, { status: 200 }>["body"];

interface RangeForm {
  preset: string;
  from: string;
  to: string;
  granularity: Granularity | "auto";
  group: string;
  print: boolean;
}

function formFrom(query: Record<string, string | undefined>): RangeForm {
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
function resolveForm(form: RangeForm, today: string): { from: string; to: string } | { errors: string[] } {
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
function autoGranularity(from: string, to: string): Granularity {
  const days = daysBetween(from, to);
  return days <= 62 ? "day" : days <= 183 ? "week" : "month";
}

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

/** The branding the page is drawn in: the institution's colours where set, the dashboard's otherwise. */
export function themeOf(branding: { primary_color?: string | null; accent_color?: string | null }) {
  const primary = isHexColour(branding.primary_color)
    ? branding.primary_color.toLowerCase()
    : DEFAULT_PRIMARY;
  const accent = isHexColour(branding.accent_color) ? branding.accent_color.toLowerCase() : DEFAULT_ACCENT;
  return { primary, accent };
}

/** The stylesheet of a theme: its URL names the colours, so it can be cached as long as any asset. */
function themeUrl(theme: { primary: string; accent: string }): string {
  return `${ANALYTICS_THEME_PATH}?${new URLSearchParams({ primary: theme.primary.slice(1), accent: theme.accent.slice(1) })}`;
}

/** The theme stylesheet's text: custom properties and the branded band, from two validated colours. */
export function themeCss(theme: { primary: string; accent: string }): string {
  const brand = readableOnWhite(theme.primary);
  return `.branded { --brand: ${brand}; --brand-ink: #ffffff; --accent: ${theme.accent}; }
.branded .brand-band { background: ${theme.primary}; color: ${inkOn(theme.primary)}; border-bottom: 4px solid ${theme.accent}; }
.branded .brand-band a { color: ${inkOn(theme.primary)}; }
.branded .kpi strong { color: ${brand}; }
`;
}

/** The page's CSP, with the institution's logo's origin among the image sources (its logo is the only image from elsewhere). */
function cspWithLogo(nonce: string, logoUrl: string | null): string {
  const base = contentSecurityPolicy(nonce);
  if (!logoUrl) return base;
  let origin: string;
  try {
    const url = new URL(logoUrl);
    if (url.protocol !== "https:") return base;
    origin = url.origin;
  } catch {
    return base;
  }
  return base.replace("img-src 'self' data:", `img-src 'self' data: ${origin}`);
}

function rangeQuery(form: RangeForm, extra: Record<string, string> = {}): string {
  const query: Record<string, string> = { preset: form.preset };
  if (form.preset === "custom") Object.assign(query, { from: form.from, to: form.to });
  if (form.granularity !== "auto") query.granularity = form.granularity;
  if (form.group) query.group = form.group;
  return new URLSearchParams({ ...query, ...extra }).toString();
}

function RangePicker({
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

function Charts({ data, locale, print = false }: { data: Analytics; locale: string; print?: boolean }) {
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

function BrandBand({ data, form }: { data: Analytics; form: RangeForm }) {
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
function PrintPage({
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

async function renderAnalytics(c: Context<AppEnv>) {
  const session = c.var.dashboard;
  enforce(holdsAbility(session.principal, "analytics:read"));
  const form = formFrom(c.req.query());
  const page = (children: Child, status = 200, theme?: { primary: string; accent: string }) =>
    html(
      c,
      <Layout
        title="Analytics"
        nonce={c.var.nonce}
        session={session}
        current={SECTION}
        stylesheets={theme ? [themeUrl(theme)] : []}
      >
        <div class="branded">{children}</div>
      </Layout>,
      status,
    );
  if (!session.institution)
    return page(
      <>
        <h1>Analytics</h1>
        <div class="card empty">
          <p>Analytics are an institution's: choose the institution whose figures you want to see.</p>
          <p>
            <a class="button" href={INSTITUTIONS_PATH}>
              Choose an institution
            </a>
          </p>
        </div>
      </>,
    );
  const { institution } = await getInstitution(session.ctx, session.institution.id);
  const theme = themeOf(institution.branding ?? {});
  const today = todayIn(institution.timeZone, session.ctx.now());
  const resolved = resolveForm(form, today);
  let data: Analytics | null = null;
  let errors: string[] = "errors" in resolved ? resolved.errors : [];
  if (!("errors" in resolved)) {
    try {
      const answer = await readAnalytics(session.ctx, {
        institutionId: institution.id,
        query: {
          from: resolved.from,
          to: resolved.to,
          granularity:
            form.granularity === "auto" ? autoGranularity(resolved.from, resolved.to) : form.granularity,
          ...(form.group ? { group: form.group } : {}),
        },
      });
      if (answer.status === 200) data = answer.body;
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== "validation_failed") throw error;
      errors = error.errors ? fieldMessages(error.errors, LABELS) : [error.message];
    }
  }
  c.header("Content-Security-Policy", cspWithLogo(c.var.nonce, institution.branding?.logo_url ?? null));
  if (data && form.print)
    return html(
      c,
      <PrintPage nonce={c.var.nonce} theme={theme} data={data} form={form} locale={institution.locale} />,
    );
  const groups = data ? data.groups.map((g) => g.name) : [];
  return page(
    <>
      {data ? (
        <BrandBand data={data} form={form} />
      ) : (
        <header class="brand-band">
          <h1>{`${institution.branding?.display_name ?? institution.name} · Analytics`}</h1>
        </header>
      )}
      <RangePicker
        form={form}
        groups={groups}
        errors={errors}
        range={"errors" in resolved ? null : resolved}
      />
      {data ? (
        <>
          {data.totals.active_learners === 0 ? (
            <p class="notice" role="status">
              No learner practised in this range. Figures appear as your learners practise; try a longer
              range, or invite learners under Members.
            </p>
          ) : null}
          <Charts data={data} locale={institution.locale} />
          <p class="hint">
            The same figures as <code>{`GET /api/institutions/${institution.id}/analytics`}</code> (ability{" "}
            <code>analytics:read</code>), current with every recording.
          </p>
        </>
      ) : null}
    </>,
    errors.length > 0 ? 422 : 200,
    theme,
  );
}

/**
 * Analytics: the white-label dashboard of `GET /api/institutions/{id}/analytics` (the same service,
 * the same ability), drawn as SVG charts in the institution's colours, with a range picker that is a
 * GET form and a print view.
 */
export function registerAnalytics(app: Hono<AppEnv>) {
  app.get(ANALYTICS_PATH, signedIn, renderAnalytics);

  // The theme's stylesheet: built from the two colours its URL names (anything but six hex digits
  // falls back to the dashboard's own), the same for everybody, so it needs no session and may be
  // cached for a year. The page's CSP allows styles from this origin only, never inline.
  app.get(ANALYTICS_THEME_PATH, (c) => {
    const hex = (value: string | undefined) => (value && /^[0-9a-fA-F]{6}$/.test(value) ? `#${value}` : null);
    const css = themeCss(
      themeOf({ primary_color: hex(c.req.query("primary")), accent_color: hex(c.req.query("accent")) }),
    );
    return c.body(css, 200, {
      "Content-Type": "text/css; charset=utf-8",
      "Cache-Control": "public, max-age=31536000, immutable",
    });
  });
}
