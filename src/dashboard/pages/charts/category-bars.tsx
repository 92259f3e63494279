import { type CategoryRow, type ChartFrame, DataTable, Figure, truncate, WIDTH } from "./frame";

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
