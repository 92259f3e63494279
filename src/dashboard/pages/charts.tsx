import type { Child } from "hono/jsx";

/**
 * Server-rendered SVG charts (docs/design/dashboard.md, "Charts"): drawn here from the figures, sent
 * inside the page, so they need no script (the CSP allows none without a nonce), print as vectors and
 * are read by screen readers through their title and description, with every figure also in a table.
 * Colours are presentation attributes (`fill`, `stroke`), which the page's CSP allows, unlike inline
 * styles. Every drawn datum is an element of class `mark` with a `<title>` (the browser's tooltip).
 */

// Drawn at about the width of a card in the two-column grid, so 14 units of text read as ~12 px.
const WIDTH = 560;
const FONT = 14;

export interface ChartFrame {
  /** Unique on the page: the ids of the title and description derive from it. */
  id: string;
  title: string;
  /** What the chart shows, in words (its summary for a screen reader). */
  desc: string;
  /** The table open from the start (the print view, which prints it). */
  open?: boolean;
}

export interface SeriesPoint {
  /** The axis label (e.g. "27 Nov"). */
  label: string;
  value: number;
}

export interface CategoryRow {
  label: string;
  value: number;
}

export interface Stack {
  label: string;
  segments: { key: string; value: number; colour: string }[];
}

/**
 * The value axis: a round interval (1, 2 or 5 times a power of ten) giving at most four steps up to
 * `max`, and the axis's top, a whole number of intervals; whole numbers stay whole (no "12.5").
 */
export function valueAxis(max: number): { top: number; ticks: number[] } {
  let interval = 1;
  if (max > 0) {
    const power = 10 ** Math.floor(Math.log10(max / 4));
    interval = [1, 2, 5, 10].map((s) => s * power).find((i) => i * 4 >= max) ?? 10 * power;
    // Counts (learners, lessons) have no half steps.
    if (Number.isInteger(max) && interval < 1) interval = 1;
  }
  const steps = max > 0 ? Math.ceil(max / interval - 1e-9) : 4;
  const ticks = Array.from({ length: steps + 1 }, (_, i) => Number((i * interval).toPrecision(12)));
  return { top: steps * interval, ticks };
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Every chart's frame: an image with a title and a description, the table that says the same after it. */
function Figure({
  frame,
  height,
  children,
  table,
}: {
  frame: ChartFrame;
  height: number;
  children: Child;
  table: Child;
}) {
  const titleId = `${frame.id}-title`;
  const descId = `${frame.id}-desc`;
  return (
    <figure class="chart" id={frame.id}>
      <figcaption>
        <h3>{frame.title}</h3>
      </figcaption>
      <svg
        xmlns="http://www.w3.org/2000/svg"
        viewBox={`0 0 ${WIDTH} ${height}`}
        role="img"
        aria-labelledby={`${titleId} ${descId}`}
        font-size={FONT}
        font-family="system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"
      >
        <title id={titleId}>{frame.title}</title>
        <desc id={descId}>{frame.desc}</desc>
        {children}
      </svg>
      <details class="chart-data" open={frame.open}>
        <summary>{`${frame.title}: the figures as a table`}</summary>
        {table}
      </details>
    </figure>
  );
}

function DataTable({
  caption,
  head,
  rows,
}: {
  caption: string;
  head: string[];
  rows: (string | number)[][];
}) {
  return (
    <div class="table-wrap">
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            {head.map((h) => (
              <th scope="col">{h}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map(([first, ...rest]) => (
            <tr>
              <th scope="row">{first}</th>
              {rest.map((cell) => (
                <td>{cell}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * One value per period (active learners, minutes, lessons completed): a line with a dot per period
 * (`kind: "line"`) or a bar per period (`"bar"`), a value axis from 0 with four grid lines, and at most
 * six period labels.
 */
export function TimeSeriesChart({
  frame,
  points,
  kind,
  colour,
  format,
  valueLabel,
  periodLabel,
}: {
  frame: ChartFrame;
  points: SeriesPoint[];
  kind: "line" | "bar";
  colour: string;
  format: (n: number) => string;
  valueLabel: string;
  periodLabel: string;
}) {
  const height = 260;
  const left = 56;
  const right = 16;
  const top = 16;
  const bottom = 36;
  const plotW = WIDTH - left - right;
  const plotH = height - top - bottom;
  const axis = valueAxis(Math.max(0, ...points.map((p) => p.value)));
  const max = axis.top;
  const n = Math.max(1, points.length);
  const band = plotW / n;
  const x = (i: number) => left + band * i + band / 2;
  const y = (v: number) => top + plotH - (v / max) * plotH;
  const every = Math.max(1, Math.ceil(n / 6));
  const path = points
    .map((p, i) => `${i === 0 ? "M" : "L"}${x(i).toFixed(1)},${y(p.value).toFixed(1)}`)
    .join("");
  const area = points.length > 0 ? `${path}L${x(n - 1).toFixed(1)},${y(0)}L${x(0).toFixed(1)},${y(0)}Z` : "";
  return (
    <Figure
      frame={frame}
      height={height}
      table={
        <DataTable
          caption={frame.title}
          head={[periodLabel, valueLabel]}
          rows={points.map((p) => [p.label, format(p.value)])}
        />
      }
    >
      <g class="grid">
        {axis.ticks.map((t) => (
          <>
            <line x1={left} x2={WIDTH - right} y1={y(t)} y2={y(t)} stroke="#d5d9e2" stroke-width="1" />
            <text x={left - 8} y={y(t) + 4} text-anchor="end" fill="#4a5263">
              {format(t)}
            </text>
          </>
        ))}
      </g>
      <g class="axis">
        {points.map((p, i) =>
          i % every === 0 ? (
            <text x={x(i)} y={height - 12} text-anchor="middle" fill="#4a5263">
              {p.label}
            </text>
          ) : null,
        )}
      </g>
      {kind === "line" ? (
        <g class="series">
          <path d={area} fill={colour} fill-opacity="0.12" stroke="none" />
          <path d={path} fill="none" stroke={colour} stroke-width="2.5" stroke-linejoin="round" />
          {points.map((p, i) => (
            <circle class="mark" cx={x(i)} cy={y(p.value)} r={n > 60 ? 2 : 3.5} fill={colour}>
              <title>{`${p.label}: ${format(p.value)} ${valueLabel.toLowerCase()}`}</title>
            </circle>
          ))}
        </g>
      ) : (
        <g class="series">
          {points.map((p, i) => {
            const w = Math.max(1, band * 0.7);
            return (
              <rect
                class="mark"
                x={(x(i) - w / 2).toFixed(1)}
                y={y(p.value).toFixed(1)}
                width={w.toFixed(1)}
                height={(y(0) - y(p.value)).toFixed(1)}
                fill={colour}
              >
                <title>{`${p.label}: ${format(p.value)} ${valueLabel.toLowerCase()}`}</title>
              </rect>
            );
          })}
        </g>
      )}
    </Figure>
  );
}

/** Categories (courses, groups) as horizontal bars, largest first as given, each labelled with its value. */
export function CategoryBarChart({
  frame,
  rows,
  colour,
  format,
  categoryLabel,
  valueLabel,
  extraColumns,
}: {
  frame: ChartFrame;
  rows: CategoryRow[];
  colour: string;
  format: (n: number) => string;
  categoryLabel: string;
  valueLabel: string;
  /** More columns for the table (the chart draws `value` only). */
  extraColumns?: { head: string; cells: string[] }[];
}) {
  const rowH = 30;
  const labelW = 200;
  const valueW = 56;
  const top = 8;
  const height = top * 2 + Math.max(1, rows.length) * rowH;
  const plotW = WIDTH - labelW - valueW;
  const max = Math.max(1, ...rows.map((r) => r.value));
  const extra = extraColumns ?? [];
  return (
    <Figure
      frame={frame}
      height={height}
      table={
        <DataTable
          caption={frame.title}
          head={[categoryLabel, valueLabel, ...extra.map((c) => c.head)]}
          rows={rows.map((r, i) => [r.label, format(r.value), ...extra.map((c) => c.cells[i] ?? "")])}
        />
      }
    >
      {rows.map((r, i) => {
        const yTop = top + i * rowH;
        const w = (r.value / max) * plotW;
        return (
          <g>
            <text x={labelW - 10} y={yTop + rowH / 2 + 4} text-anchor="end" fill="#1b1f2a">
              {truncate(r.label, 22)}
            </text>
            <rect x={labelW} y={yTop + 5} width={plotW} height={rowH - 10} fill="#eef0f5" />
            <rect
              class="mark"
              x={labelW}
              y={yTop + 5}
              width={Math.max(r.value > 0 ? 2 : 0, w).toFixed(1)}
              height={rowH - 10}
              fill={colour}
            >
              <title>{`${r.label}: ${format(r.value)} ${valueLabel.toLowerCase()}`}</title>
            </rect>
            <text x={labelW + plotW + 8} y={yTop + rowH / 2 + 4} fill="#1b1f2a">
              {format(r.value)}
            </text>
          </g>
        );
      })}
    </Figure>
  );
}

/**
 * Shares of a whole per row (learners per CEFR level, overall and per skill): one 100 % bar per row,
 * a segment per key in the order given, and a legend.
 */
export function StackedShareChart({
  frame,
  stacks,
  keys,
  format,
  rowLabel,
}: {
  frame: ChartFrame;
  stacks: Stack[];
  keys: { key: string; label: string; colour: string }[];
  format: (n: number) => string;
  rowLabel: string;
}) {
  const rowH = 30;
  const labelW = 96;
  const right = 12;
  const legendH = 34;
  const top = 8;
  const plotW = WIDTH - labelW - right;
  const height = top + stacks.length * rowH + legendH;
  const legendY = top + stacks.length * rowH + 18;
  const legendStep = plotW / Math.max(1, keys.length);
  return (
    <Figure
      frame={frame}
      height={height}
      table={
        <DataTable
          caption={frame.title}
          head={[rowLabel, ...keys.map((k) => k.label)]}
          rows={stacks.map((s) => [
            s.label,
            ...keys.map((k) => format(s.segments.find((g) => g.key === k.key)?.value ?? 0)),
          ])}
        />
      }
    >
      {stacks.map((s, i) => {
        const yTop = top + i * rowH;
        const total = s.segments.reduce((sum, g) => sum + g.value, 0);
        let at = labelW;
        return (
          <g>
            <text x={labelW - 10} y={yTop + rowH / 2 + 4} text-anchor="end" fill="#1b1f2a">
              {s.label}
            </text>
            {total === 0 ? (
              <rect x={labelW} y={yTop + 5} width={plotW} height={rowH - 10} fill="#eef0f5" />
            ) : (
              s.segments.map((g) => {
                const w = (g.value / total) * plotW;
                const x = at;
                at += w;
                if (g.value === 0) return null;
                const share = Math.round((g.value / total) * 100);
                return (
                  <rect
                    class="mark"
                    x={x.toFixed(1)}
                    y={yTop + 5}
                    width={w.toFixed(1)}
                    height={rowH - 10}
                    fill={g.colour}
                    stroke="#ffffff"
                    stroke-width="1"
                  >
                    <title>{`${s.label}, ${keys.find((k) => k.key === g.key)?.label ?? g.key}: ${format(g.value)} (${share} %)`}</title>
                  </rect>
                );
              })
            )}
          </g>
        );
      })}
      <g class="legend">
        {keys.map((k, i) => (
          <g>
            <rect
              x={labelW + i * legendStep}
              y={legendY - 10}
              width="12"
              height="12"
              fill={k.colour}
              stroke="#8a93a6"
              stroke-width="0.5"
            />
            <text x={labelW + i * legendStep + 17} y={legendY} fill="#1b1f2a">
              {k.label}
            </text>
          </g>
        ))}
      </g>
    </Figure>
  );
}
