import type { Child } from "hono/jsx";

/**
 * Server-rendered SVG charts (docs/design/dashboard.md, "Charts"): drawn here from the figures, sent
 * inside the page, so they need no script (the CSP allows none without a nonce), print as vectors and
 * are read by screen readers through their title and description, with every figure also in a table.
 * Colours are presentation attributes (`fill`, `stroke`), which the page's CSP allows, unlike inline
 * styles. Every drawn datum is an element of class `mark` with a `<title>` (the browser's tooltip).
 */

// Drawn at about the width of a card in the two-column grid, so 14 units of text read as ~12 px.
export const WIDTH = 560;
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

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Every chart's frame: an image with a title and a description, the table that says the same after it. */
export function Figure({
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

export function DataTable({
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
