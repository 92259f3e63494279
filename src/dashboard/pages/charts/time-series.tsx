import { type ChartFrame, DataTable, Figure, type SeriesPoint, valueAxis, WIDTH } from "./frame";

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
