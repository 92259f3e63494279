import { type ChartFrame, DataTable, Figure, type Stack, WIDTH } from "./frame";

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
