// The report of BENCH_ONLY=baseline (../baseline.mjs).
import { median } from "../lib.mjs";

export const GOAL = 1.1;

const num = (metric, v) =>
  v === null || v === undefined
    ? "-"
    : metric === "rps"
      ? Math.round(v).toLocaleString("en-US")
      : v.toFixed(3);
const times = (v) => (v === null || v === undefined ? "-" : `${v.toFixed(2)}×`);

export function baselineReport(result, formatTable) {
  if (result.profileOnly) {
    const lines = [
      "",
      `Hot paths profiled (BENCH_BASELINE_PROFILE): baseline ${result.baseline.commit.slice(0, 7)}, current ${result.current.commit.slice(0, 7)}; sampled CPU ms per request per isolate, then its top functions (self, inclusive)`,
    ];
    for (const p of result.profiles)
      lines.push(
        "",
        `${p.label} [${p.variant}] ${p.isolate}: ${p.cpuMsPerRequest.toFixed(3)} ms sampled per request (${p.requests} requests; ${p.file}); one request: ${p.d1RoundTrips} D1 round trip(s) in DB`,
        ...p.d1Statements.map((l) => `  ${l}`),
        "  self:",
        ...p.self.slice(0, 15).map((l) => `  ${l}`),
        "  inclusive:",
        ...p.inclusive.slice(0, 15).map((l) => `  ${l}`),
      );
    return lines.join("\n");
  }
  const out = [];
  const dirty = result.current.dirty ? " (with uncommitted changes)" : "";
  out.push(
    "",
    `Hot paths against the commit before issue 35: baseline ${result.baseline.commit.slice(0, 7)} (${result.baseline.rev}), current ${result.current.commit.slice(0, 7)}${dirty}`,
    `Tenants: ${Object.entries(result.tenants)
      .map(([k, t]) => `${k} ${t.id} in ${t.binding} (tokens ${t.tokens}, members ${t.members})`)
      .join("; ")}`,
    "Cost ratio per round: latency current / baseline, req/s baseline / current (> 1: current slower); verdict on the median of the per-round ratios.",
    "CPU ms/req: the workerd's CPU time (user + system, 10 ms ticks) over the run / the requests it answered; other work on the machine moves it less than wall time.",
  );
  if (result.failures.length)
    out.push(
      `!!! ${result.failures.length} run(s) had non-2xx responses or errors; NOT valid:\n    ${result.failures.join("\n    ")}`,
    );
  const disturbed = [...result.runs, ...result.attempts].map((r) => r.otherCpuShare ?? 0);
  if (disturbed.length)
    out.push(
      `Other work's CPU share during the runs: median ${Math.round(median(disturbed) * 100)}%, worst ${Math.round(Math.max(...disturbed) * 100)}%.`,
    );
  const table = (rows) =>
    formatTable(
      ["path", "conc", "metric", "subject", "reference", "per round", "median", "goal", "verdict"],
      rows.map((c) => [
        c.label,
        c.connections,
        c.metric === "rps" ? "req/s" : c.metric === "cpu" ? "CPU ms/req" : `${c.metric} ms`,
        num(c.metric, c.ours),
        num(c.metric, c.theirs),
        c.perRound.map((r) => (r === null ? "-" : r.toFixed(2))).join(" "),
        times(c.ratio),
        c.verdict === "(reference)" ? "-" : `≤ ${GOAL}×`,
        c.verdict,
      ]),
    );
  out.push("", "Current (institution in DB) vs baseline:");
  out.push(table(result.checks.filter((c) => c.reference === "baseline")));
  const db1 = result.checks.filter((c) => c.reference === "current");
  if (db1.length) {
    out.push("", "The directory's cost: current, institution in DB_1 vs institution in DB (reference):");
    out.push(table(db1));
  }
  const counted = result.checks.filter((c) => c.verdict !== "(reference)");
  out.push(
    `${counted.filter((c) => c.verdict === "PASS").length} of ${counted.length} hot-path checks PASS.`,
  );
  return out.join("\n");
}
