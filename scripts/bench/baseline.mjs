// BENCH_ONLY=baseline (issue 35's goal: "the hot paths' ratios in `npm run bench` (me, attempts,
// lists) within 10 % of today's in the same run"): the hot paths of this checkout's worker against
// those of the worker as it was before issue 35 (the baseline commit), both in this one run.
//
// The baseline worker is built from ITS source: a temporary detached `git worktree` of the baseline
// commit outside the repository (os.tmpdir()), node_modules linked to this checkout's, bundled with
// `wrangler deploy --dry-run` there (its own wrangler.toml: only DB; its own build step), its
// migrations folder copied beside the bundle; the worktree is removed as soon as the bundle is
// written. Both workers then run under Miniflare on loopback, each with its own fresh storage, every
// database of its own wrangler.toml migrated with its own migrations, and seeded the same way
// (scripts/bench/seed.mjs's tenant: an enterprise institution with an unreachable rate limit, its
// admin signed in, 30 API tokens; plus members and a 100-item course for the attempts). The current
// worker gets a second, identical tenant placed in DB_1 through the directory, to show what the
// directory costs an institution outside DB.
//
// Measured, interleaved: at each concurrency level each path is a group — the baseline, the current
// worker (institution in DB), the current worker (institution in DB_1) — measured back to back, the
// groups' order rotating per round and the baseline/current order alternating per round. Per round
// the ratio current ÷ baseline (latency: current / baseline; req/s: baseline / current, so > 1 is
// always "current is slower"); the verdict is the median of the per-round ratios, goal ≤ 1.10×.
//   GET /api/auth/me                         c1 p50, c16 req/s (and mean)
//   GET /api/integrations/tokens             25 of 31 tokens; c1 p50, c16 req/s (and mean)
//   GET /api/institutions/{id}/members       25 of 34 members; c1 p50, c16 req/s (and mean)
//   POST /api/progress/attempts              the learning-activity write: 100 attempts for a member, as
//                                            the admin; each request alone, a fresh member each, after
//                                            the previous one's outbox events were dispatched (so the
//                                            consumers' work never shares workerd's thread with a
//                                            measured request); mean latency of a block per round
//
//   BENCH_BASELINE_COMMIT=<rev>     the baseline (default 722e280^, the parent of issue 35's first commit)
//   BENCH_BASELINE_REQUESTS=10      attempts requests per variant per round (after 3 unrecorded ones)
//   BENCH_BASELINE_PROFILE=<prefix> a diagnostic instead of the rounds: each path at the highest concurrency
//                                   on each worker (unminified bundles), workerd's inspector sampling the
//                                   worker and D1 isolates; profiles into <prefix>.<variant>.<path>.<isolate>.cpuprofile,
//                                   the top functions per request printed
//   BENCH_DURATION, BENCH_ROUNDS, BENCH_WARMUP, BENCH_SETTLE, BENCH_CONNECTIONS as in run.mjs.
import os from "node:os";
import { basename } from "node:path";
import { BASELINE_REV, buildBaseline, git } from "./baseline/build.mjs";
import { PROFILE, PROFILE_PORTS, profilePaths } from "./baseline/profile.mjs";
import { GOAL } from "./baseline/report.mjs";
import {
  ATTEMPTS_PER_REQUEST,
  courseStatements,
  drained,
  recordAttempts,
  seedTenant,
} from "./baseline/tenant.mjs";
import {
  allProcStats,
  cpuSnapshot,
  linguaOptions,
  loadProblem,
  median,
  migrateEveryDatabase,
  otherCpuShare,
  procStat,
  ratioAcrossRounds,
  rotatingOrder,
  spread,
  startWorker,
  withProfilingEntry,
} from "./lib.mjs";
import { d1RoundTripsEntry } from "./sso-profile.mjs";

export { baselineReport } from "./baseline/report.mjs";

const ATTEMPT_REQUESTS = Number(process.env.BENCH_BASELINE_REQUESTS || 10);
const ATTEMPT_WARMUP = 3;

const PATHS = [
  { id: "me", label: "GET /api/auth/me", path: () => "/api/auth/me" },
  { id: "tokens", label: "GET /api/integrations/tokens", path: () => "/api/integrations/tokens" },
  {
    id: "members",
    label: "GET /api/institutions/{id}/members",
    path: (t) => `/api/institutions/${t.id}/members`,
  },
];
const VARIANTS = [
  { id: "baseline", label: "baseline" },
  { id: "current", label: "current, institution in DB" },
  { id: "current-db1", label: "current, institution in DB_1" },
];
/** The workerd processes this process started (each Miniflare runs one). */
function workerdPids() {
  const pids = new Set();
  for (const [pid, p] of allProcStats())
    if (p.comm.startsWith("workerd") && p.ppid === process.pid) pids.add(pid);
  return pids;
}

/** CPU ticks (1/100 s, user + system) of one workerd. */
const ticksOf = (pid) => procStat(pid).ticks;

/** The metrics per concurrency: the first decides (the brief's), the others are reported beside it. */
const METRICS = { 1: ["p50", "rps", "cpu"], 16: ["rps", "mean", "cpu"] };
const metricsAt = (connections) => METRICS[connections] ?? ["mean", "rps", "cpu"];

/** Current ÷ baseline as a cost: latency ours / theirs, req/s theirs / ours (> 1: current is slower). */
function cost(metric, subject, reference) {
  if (!subject || !reference) return null;
  return metric === "rps"
    ? reference.rps / subject.rps
    : figureOf(metric, subject) / figureOf(metric, reference);
}

/** A run's figure: req/s, workerd CPU ms per request, or a latency. */
function figureOf(metric, run) {
  if (metric === "rps") return run.rps;
  if (metric === "cpu") return run.cpuMsPerRequest;
  return run.latencyMs[metric];
}

export async function runBaseline({
  config,
  scriptPath,
  settings,
  loadGenerator,
  log = (m) => console.error(m),
}) {
  const baseline = await buildBaseline(log);
  const workers = [];
  const failures = [];
  try {
    log("bench: baseline: starting both workers…");
    // Each worker's workerd, for its CPU time per request (other work on the machine stretches wall
    // time far more than the CPU time a request costs).
    const startMigrated = async (cfg, script, port) => {
      const before = workerdPids();
      const options = linguaOptions(cfg, script);
      // Profiled: the inspector open, and DB's round trips per request counted by an entry module.
      const worker = await startWorker(
        PROFILE
          ? withProfilingEntry(options, {
              inspectorPort: port,
              scriptPath: script,
              name: "bench-baseline-d1-entry.mjs",
              contents: d1RoundTripsEntry(`./${basename(script)}`),
            })
          : options,
      );
      workers.push(worker);
      const pids = [...workerdPids()].filter((pid) => !before.has(pid));
      if (pids.length !== 1) throw new Error(`expected one new workerd process, found ${pids.length}`);
      const { d1 } = await migrateEveryDatabase(worker.mf, cfg);
      return { worker, d1, pid: pids[0] };
    };
    const old = await startMigrated(baseline.config, baseline.scriptPath, PROFILE_PORTS.baseline);
    const cur = await startMigrated(config, scriptPath, PROFILE_PORTS.current);
    const memberCount = ATTEMPT_WARMUP + settings.rounds * ATTEMPT_REQUESTS;
    const tenants = {
      baseline: await seedTenant({
        home: old.d1,
        d1: old.d1,
        baseUrl: old.worker.url,
        id: "ins_bench",
        binding: "DB",
        memberCount,
        withCourse: true,
      }),
      current: await seedTenant({
        home: cur.d1,
        d1: cur.d1,
        baseUrl: cur.worker.url,
        id: "ins_bench",
        binding: "DB",
        memberCount,
        withCourse: true,
      }),
    };
    const secondDatabase = config.d1Databases.DB_1 ? await cur.worker.mf.getD1Database("DB_1") : null;
    if (secondDatabase) {
      await secondDatabase.batch(courseStatements(secondDatabase));
      tenants["current-db1"] = await seedTenant({
        home: cur.d1,
        d1: secondDatabase,
        baseUrl: cur.worker.url,
        id: "ins_bench_db1",
        binding: "DB_1",
        memberCount,
        withCourse: false,
      });
    }
    tenants.baseline.pid = old.pid;
    tenants.current.pid = cur.pid;
    if (tenants["current-db1"]) tenants["current-db1"].pid = cur.pid;
    const variants = VARIANTS.filter((v) => tenants[v.id]);
    if (PROFILE)
      return await profilePaths({ paths: PATHS, tenants, variants, settings, loadGenerator, baseline, log });

    const runs = [];
    const target = (path, variant) => ({
      url: new URL(path.path(tenants[variant.id]), tenants[variant.id].base).toString(),
      headers: tenants[variant.id].auth,
    });
    const load = async (path, variant, connections, round) => {
      const before = cpuSnapshot();
      const ticks = ticksOf(tenants[variant.id].pid);
      const result = await loadGenerator.run({
        ...target(path, variant),
        connections,
        duration: settings.durationS,
        warmup: settings.settleS,
      });
      // Every request the worker answered in this run, the unrecorded lead-in's too.
      const answered =
        result.requests + Object.values(result.warmupStatusCounts ?? {}).reduce((a, b) => a + b, 0);
      result.cpuMsPerRequest = ((ticksOf(tenants[variant.id].pid) - ticks) * 10) / answered;
      result.otherCpuShare = otherCpuShare(before, cpuSnapshot());
      result.loadAvgAfter = os.loadavg();
      const problem = loadProblem(result);
      if (problem)
        failures.push(`${path.label} [${variant.label}] × ${connections}, round ${round + 1}: ${problem}`);
      runs.push({ path: path.id, variant: variant.id, connections, round, ...result });
    };
    // The order within a group alternates per round, so neither worker always runs first.
    const within = (round) => (round % 2 ? [variants[1], variants[0], ...variants.slice(2)] : variants);

    for (const connections of settings.connections) {
      if (settings.warmupS > 0)
        for (const path of PATHS)
          for (const variant of variants) {
            log(`bench: baseline × ${connections} warm-up ${path.label} [${variant.label}]…`);
            const result = await loadGenerator.run({
              ...target(path, variant),
              connections,
              duration: settings.warmupS,
              warmup: 0,
            });
            const problem = loadProblem(result);
            if (problem)
              failures.push(`${path.label} [${variant.label}] × ${connections} (warm-up): ${problem}`);
          }
      const orders = rotatingOrder(PATHS, settings.rounds);
      for (let round = 0; round < settings.rounds; round++)
        for (const path of orders[round])
          for (const variant of within(round)) {
            log(
              `bench: baseline × ${connections} round ${round + 1}/${settings.rounds} ${path.label} [${variant.label}]…`,
            );
            await load(path, variant, connections, round);
          }
    }

    // Attempts: each request alone, a fresh member each, blocks alternating per round.
    const attempts = [];
    const nextMember = Object.fromEntries(variants.map((v) => [v.id, 0]));
    const record = async (variant) => {
      const tenant = tenants[variant.id];
      await drained(tenant);
      const ticks = ticksOf(tenant.pid);
      const ms = await recordAttempts(tenant, tenant.members[nextMember[variant.id]++]);
      const cpuMs = (ticksOf(tenant.pid) - ticks) * 10;
      await drained(tenant);
      return { ms, cpuMs };
    };
    for (const variant of variants) for (let i = 0; i < ATTEMPT_WARMUP; i++) await record(variant);
    for (let round = 0; round < settings.rounds; round++)
      for (const variant of within(round)) {
        log(
          `bench: baseline round ${round + 1}/${settings.rounds} POST /api/progress/attempts [${variant.label}]…`,
        );
        const before = cpuSnapshot();
        const latencies = [];
        let cpuMs = 0;
        for (let i = 0; i < ATTEMPT_REQUESTS; i++) {
          const one = await record(variant);
          latencies.push(one.ms);
          cpuMs += one.cpuMs;
        }
        attempts.push({
          variant: variant.id,
          round,
          latencies,
          meanMs: latencies.reduce((a, b) => a + b, 0) / latencies.length,
          p50Ms: median(latencies),
          // workerd CPU from each request's start to its answer (10 ms ticks, summed over the block).
          cpuMsPerRequest: cpuMs / latencies.length,
          otherCpuShare: otherCpuShare(before, cpuSnapshot()),
        });
      }

    // Ratios per round, their medians.
    const runOf = (path, variant, connections, round) =>
      runs.find(
        (r) => r.path === path && r.variant === variant && r.connections === connections && r.round === round,
      );
    const checks = [];
    const compare = (subject, reference) => {
      for (const connections of settings.connections)
        for (const path of PATHS)
          for (const [i, metric] of metricsAt(connections).entries()) {
            const ratios = ratioAcrossRounds(settings.rounds, (round) =>
              cost(
                metric,
                runOf(path.id, subject, connections, round),
                runOf(path.id, reference, connections, round),
              ),
            );
            const value = (variant) =>
              spread(
                Array.from({ length: settings.rounds }, (_, round) => {
                  const r = runOf(path.id, variant, connections, round);
                  return r ? figureOf(metric, r) : null;
                }),
              ).median;
            checks.push({
              subject,
              reference,
              path: path.id,
              label: path.label,
              connections,
              metric,
              decides: i === 0,
              ours: value(subject),
              theirs: value(reference),
              perRound: ratios.perRound,
              ratio: ratios.median,
            });
          }
      for (const [metric, field] of [
        ["mean", "meanMs"],
        ["cpu", "cpuMsPerRequest"],
      ]) {
        const attemptRatios = ratioAcrossRounds(settings.rounds, (round) => {
          const s = attempts.find((a) => a.variant === subject && a.round === round);
          const r = attempts.find((a) => a.variant === reference && a.round === round);
          return s && r && r[field] > 0 ? s[field] / r[field] : null;
        });
        const attemptValue = (variant) =>
          median(attempts.filter((a) => a.variant === variant).map((a) => a[field]));
        checks.push({
          subject,
          reference,
          path: "attempts",
          label: `POST /api/progress/attempts (${ATTEMPTS_PER_REQUEST} attempts)`,
          connections: 1,
          metric,
          decides: metric === "mean",
          ours: attemptValue(subject),
          theirs: attemptValue(reference),
          perRound: attemptRatios.perRound,
          ratio: attemptRatios.median,
        });
      }
    };
    compare("current", "baseline");
    if (tenants["current-db1"]) compare("current-db1", "current");
    for (const c of checks)
      c.verdict =
        c.reference !== "baseline" || !c.decides
          ? "(reference)"
          : c.ratio !== null && c.ratio <= GOAL
            ? "PASS"
            : "MISS";

    return {
      baseline: {
        commit: baseline.commit,
        subject: baseline.subject,
        size: baseline.size,
        rev: BASELINE_REV,
      },
      current: { commit: git(["rev-parse", "HEAD"]), dirty: git(["status", "--porcelain"]) !== "" },
      tenants: Object.fromEntries(
        Object.entries(tenants).map(([k, t]) => [
          k,
          { id: t.id, binding: t.binding, tokens: t.tokensShown, members: t.membersShown },
        ]),
      ),
      settings: { ...settings, attemptRequests: ATTEMPT_REQUESTS, attemptWarmup: ATTEMPT_WARMUP, goal: GOAL },
      runs,
      attempts,
      checks,
      failures,
    };
  } finally {
    for (const w of workers) await w.dispose().catch(() => undefined);
  }
}
