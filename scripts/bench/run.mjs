#!/usr/bin/env node
// `npm run bench`: Lingua API against floor workers, in one run on one machine.
//
//   BENCH_DURATION=4          measured seconds per run
//   BENCH_ROUNDS=3            rounds per concurrency level; each round measures every target once
//   BENCH_WARMUP=1.5          warm-up seconds per target per concurrency level, before the rounds, not recorded
//   BENCH_SETTLE=0.25         unrecorded lead-in seconds at the start of every run (fresh connections)
//   BENCH_CONNECTIONS=1,16    concurrency levels
//   BENCH_STARTUP_ROUNDS=5    fresh starts per worker for the start-up comparison
//   BENCH_ONLY=me,startup     only these scenarios (the floors their goals need are added)
//   BENCH_STORAGE_DIR=DIR     where D1/DO storage lives during the run (default /dev/shm, else the OS temp dir)
//   BENCH_ONLY=webhooks       the webhook pipeline (issue 4; scripts/bench/webhooks.mjs): attempt-to-delivery
//                             latency, a 10,000-event × 10-webhook burst against a bare signed-fetch floor.
//   BENCH_ONLY=activity       the learning-activity scenario (issue 3; scripts/bench/activity.mjs): learner
//                             routes on a ~10k- and a ~1M-attempt dataset, rows read per request, its own
//                             floors. Not part of the default run (about 10 minutes of load plus, the first
//                             time each day, ~6 minutes to build the large dataset; see datasets.mjs).
//                             BENCH_ACTIVITY_ROUTES=public-hit,leaderboard measures only those routes.
//   BENCH_ONLY=bulk           the bulk-provisioning scenario (scripts/bench/bulk.mjs): a 10,000-row member
//                             upload end to end (rows/s) against a plain batched D1 insert of the same rows.
//                             Opt-in (about a minute).
//   BENCH_ONLY=lti            the LTI launch callback end to end (scripts/bench/lti.mjs): req/s and latency
//                             of validated launches (JWKS cached) against the sign-in route. Opt-in.
//   BENCH_ONLY=sso            OIDC and SAML sign-in end to end against loopback IdPs (scripts/bench/sso.mjs):
//                             sign-ins/s against password sign-in at concurrency 1 and 4. Opt-in.
//   BENCH_ONLY=exports        the exports scenario (scripts/bench/exports.mjs): a 1,000,000-row activity
//                             export end to end, rows/s, workerd's peak memory and the download's MB/s,
//                             against a plain D1 → R2 copy of the same rows. Opt-in (a few minutes; uses
//                             the large dataset of the activity scenario).
//   BENCH_ONLY=analytics      institution analytics over 90 days for 10,000 members (scripts/bench/analytics.mjs):
//                             latency, req/s, D1 statements per request (at most 3), the attempts table renamed away.
//   BENCH_ONLY=xapi           xAPI forwarding (issue 29; scripts/bench/xapi.mjs): 10,000 attempts forwarded to a
//                             minimal loopback LRS against a bare batched fetch of the same bodies, and recording
//                             attempts with and without an LRS endpoint. Opt-in (a few minutes).
//   BENCH_ONLY=capacity       bytes per row and per index of every table that grows, from SQLite's dbstat on a
//                             database filled through the API (scripts/bench/capacity.mjs; needs `sqlite3`).
//   BENCH_ONLY=baseline       the hot paths (me, tokens and members lists, 100 attempts) of this checkout against
//                             the commit before issue 35, built from its own source in a temporary worktree,
//                             interleaved in one run (scripts/bench/baseline.mjs). Opt-in (6–7 minutes).
//
// Workers run under the Miniflare API (workerd), not `wrangler dev`; the load comes from a second,
// long-lived Node process (load.mjs --serve, autocannon). At each concurrency level every target is
// warmed up once, then measured in BENCH_ROUNDS short rounds, each round visiting every target once
// in a rotating order, so slow drift of the machine is spread over all targets instead of landing
// on whichever ran at that moment. Reported figures are medians across rounds; a goal's verdict is
// the median of its per-round ratios (ours and its floor from the same round). Raw numbers,
// every round of every target, go to .bench/results.json.
//
// To add a benchmark: a target in TARGETS (a worker from WORKERS and a path), optionally a goal in
// API_GOALS (lib.mjs); a new dataset is a new worker entry whose start() seeds what it needs.
import "./v8-flags.mjs"; // first: it patches Miniflare as it loads (BENCH_V8_FLAGS)
import { writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { activityReport, runActivity } from "./activity.mjs";
import { analyticsReport, runAnalytics } from "./analytics.mjs";
import { baselineReport, runBaseline } from "./baseline.mjs";
import { bulkReport, runBulk } from "./bulk.mjs";
import { capacityReport, runCapacity } from "./capacity.mjs";
import { exportsReport, runExports } from "./exports.mjs";
import {
  API_GOALS,
  BENCH_OUT,
  BENCH_SCRIPTS,
  bundleWithEsbuild,
  bundleWithWrangler,
  cpuBusyShare,
  cpuSnapshot,
  createMiniflare,
  ensureDir,
  floorOptions,
  formatTable,
  goalMetrics,
  loadProblem,
  median,
  migrateEveryDatabase,
  otherCpuShare,
  randomKey,
  ratioAcrossRounds,
  readWranglerConfig,
  roundRobin,
  spread,
  startLoadGenerator,
  startWorker,
  storageBase,
  systemInfo,
  workerOptions,
} from "./lib.mjs";
import { ltiReport, runLti } from "./lti.mjs";
import { BENCH_RATE_LIMIT_PER_MINUTE, BENCH_TENANT, seedBenchTenant } from "./seed.mjs";
import { runSso, ssoReport } from "./sso.mjs";
import { runWebhooks, webhooksReport } from "./webhooks.mjs";
import { runXapi, xapiReport } from "./xapi.mjs";

// ---------------------------------------------------------------------------------------------
// Settings

function numberFromEnv(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0)
    throw new Error(`${name} must be a non-negative number, got ${raw}`);
  return value;
}

const settings = {
  durationS: numberFromEnv("BENCH_DURATION", 4),
  rounds: numberFromEnv("BENCH_ROUNDS", 3),
  warmupS: numberFromEnv("BENCH_WARMUP", 1.5),
  settleS: numberFromEnv("BENCH_SETTLE", 0.25),
  connections: (process.env.BENCH_CONNECTIONS || "1,16").split(",").map((c) => Number(c.trim())),
  startupRounds: numberFromEnv("BENCH_STARTUP_ROUNDS", 5),
  only: process.env.BENCH_ONLY
    ? process.env.BENCH_ONLY.split(",")
        .map((s) => s.trim())
        .filter(Boolean)
    : null,
};
if (settings.connections.some((c) => !Number.isInteger(c) || c < 1))
  throw new Error("BENCH_CONNECTIONS must list positive integers");
if (!Number.isInteger(settings.rounds) || settings.rounds < 1)
  throw new Error("BENCH_ROUNDS must be a positive integer");
if (settings.durationS <= 0) throw new Error("BENCH_DURATION must be positive");

// ---------------------------------------------------------------------------------------------
// Workers under test. start() returns { url, headers?, dispose, info? }; `auth` headers are those
// a target with `auth: true` sends.

const build = {}; // filled once by prepareBundles()

const WORKERS = {
  lingua: {
    label: "Lingua API (wrangler deploy --dry-run bundle)",
    async start({ config }) {
      const worker = await startWorker(linguaOptions(config));
      try {
        const { d1, applied: migrations } = await migrateEveryDatabase(worker.mf, config);
        const seeded = await seedBenchTenant({ d1, baseUrl: worker.url });
        return {
          ...worker,
          auth: { Authorization: `Bearer ${seeded.token}` },
          rotateAuthorization: seeded.extraTokens
            .slice(0, INSTITUTION_TOKENS)
            .map((token) => `Bearer ${token}`),
          info: {
            migrations,
            tenant: { ...BENCH_TENANT, ...seeded, token: "<redacted>", extraTokens: "<redacted>" },
          },
        };
      } catch (error) {
        await worker.dispose();
        throw error;
      }
    },
  },
  floor: {
    label: "floor worker (scripts/bench/floor-worker.mjs)",
    async start({ config }) {
      return startWorker(floorOptions(config));
    },
  },
};

function linguaOptions(config) {
  return workerOptions({
    name: "lingua-api",
    scriptPath: build.lingua.scriptPath,
    compatibilityDate: config.compatibilityDate,
    compatibilityFlags: config.compatibilityFlags,
    bindings: { ...config.vars, ENCRYPTION_KEY: randomKey() },
    d1Databases: config.d1Databases,
    durableObjects: config.durableObjects,
  });
}

function bareHonoOptions(config) {
  return workerOptions({
    name: "bare-hono",
    scriptPath: build.bareHono.scriptPath,
    compatibilityDate: config.compatibilityDate,
    compatibilityFlags: config.compatibilityFlags,
  });
}

// ---------------------------------------------------------------------------------------------
// Targets (load runs) and goals. Each round visits the targets in this order, rotated (round k
// starts further down the list); each route comes right after its floor, so that the two are
// measured seconds apart in every round but the one whose rotation splits them.

/** The me-institution scenario: this many API tokens of the bench institution share the load. */
const INSTITUTION_TOKENS = 16;

// /bare and /do answer with the headers of the Lingua response they stand for, the "-plain" floors
// with a content type alone (see floor-worker.mjs), for the reference rows below.
const TARGETS = [
  { id: "bare", worker: "floor", path: "/bare", label: "floor /bare" },
  { id: "healthz", worker: "lingua", path: "/healthz", label: "GET /healthz" },
  { id: "do", worker: "floor", path: "/do", label: "floor /do (1 DO RPC)" },
  { id: "me", worker: "lingua", path: "/api/auth/me", auth: true, label: "GET /api/auth/me" },
  {
    id: "me-institution",
    worker: "lingua",
    path: "/api/auth/me",
    auth: true,
    rotate: true,
    label: `GET /api/auth/me, ${INSTITUTION_TOKENS} tokens of one institution in turn`,
  },
  { id: "d1", worker: "floor", path: "/d1", label: "floor /d1 (1 D1 read)" },
  {
    id: "tokens",
    worker: "lingua",
    path: "/api/integrations/tokens",
    auth: true,
    label: "GET /api/integrations/tokens (25 of 31)",
  },
  { id: "bare-plain", worker: "floor", path: "/bare-plain", label: "floor /bare-plain (no headers)" },
  { id: "do-plain", worker: "floor", path: "/do-plain", label: "floor /do-plain (no headers)" },
];

/**
 * The goals again against floors with a content type alone, as the bench measured them before
 * 2026-11-22 13:00 UTC: reported beside the verdict, not counted (a "(reference)" row).
 */
const PLAIN_FLOORS = { bare: "bare-plain", do: "do-plain" };
const PLAIN_FLOOR_REFERENCES = API_GOALS.map((goal) => ({
  ...goal,
  id: `${goal.id}-plain`,
  floors: goal.floors.map((floor) => PLAIN_FLOORS[floor] ?? floor),
  by: [],
  reference: goal.by,
  ...(goal.underLoad ? { underLoad: { by: [], reference: goal.underLoad.by } } : {}),
  text: goal.text.replace(/floor \/(bare|do)\b/g, "floor /$1-plain"),
}));
const GOALS = [...API_GOALS, ...PLAIN_FLOOR_REFERENCES];

/** Other processes' CPU share during a run above which the report warns. */
const OTHER_CPU_WARN = 0.1;
const STARTUP_GOAL = { max: 2, text: "start-up ≤ 2× bare Hono" };

// ---------------------------------------------------------------------------------------------
// Selection

const SCENARIOS = [
  ...TARGETS.map((t) => t.id),
  "startup",
  "activity",
  "webhooks",
  "exports",
  "bulk",
  "analytics",
  "lti",
  "sso",
  "xapi",
  "capacity",
  "baseline",
];
/** Only with BENCH_ONLY: too long for the default run. */
const OPT_IN_SCENARIOS = new Set([
  "activity",
  "webhooks",
  "exports",
  "bulk",
  "analytics",
  "lti",
  "sso",
  "xapi",
  "capacity",
  "baseline",
]);

function selectScenarios() {
  if (!settings.only)
    return { selected: new Set(SCENARIOS.filter((id) => !OPT_IN_SCENARIOS.has(id))), added: [] };
  const unknown = settings.only.filter((id) => !SCENARIOS.includes(id));
  if (unknown.length)
    throw new Error(`BENCH_ONLY: unknown ${unknown.join(", ")}; known: ${SCENARIOS.join(", ")}`);
  const selected = new Set(settings.only);
  const added = [];
  for (const goal of GOALS) {
    if (!selected.has(goal.subject)) continue;
    for (const floor of goal.floors) {
      if (!selected.has(floor)) {
        selected.add(floor);
        added.push(floor);
      }
    }
  }
  return { selected, added };
}

// ---------------------------------------------------------------------------------------------
// Steps

async function prepareBundles(needLingua, needBareHono) {
  const dist = ensureDir(join(BENCH_OUT, "dist"));
  if (needLingua) build.lingua = bundleWithWrangler(join(dist, "lingua"));
  if (needBareHono)
    build.bareHono = await bundleWithEsbuild(
      join(BENCH_SCRIPTS, "bare-hono-worker.mjs"),
      join(dist, "bare-hono", "index.js"),
    );
}

/** One fresh start: `new Miniflare` until the first 200 of `path` has been read. */
async function timeFirstResponse(options, path, expectStatus = 200) {
  const { mf, startedAt, dispose } = createMiniflare(options);
  try {
    const url = await mf.ready;
    const readyAt = performance.now();
    const response = await fetch(new URL(path, url));
    const body = await response.text();
    const doneAt = performance.now();
    if (response.status !== expectStatus)
      throw new Error(`${path} answered ${response.status} during start-up: ${body.slice(0, 200)}`);
    return { totalMs: doneAt - startedAt, readyMs: readyAt - startedAt, firstFetchMs: doneAt - readyAt };
  } finally {
    await dispose();
  }
}

/**
 * Lingua against bare Hono is the goal. The floor worker (a tiny script, but Lingua's kinds of
 * bindings: D1 and a SQLite Durable Object) is measured alongside as a diagnostic, to tell
 * Miniflare's cost of setting up bindings apart from the cost of loading our script. So is a fresh
 * Lingua's first answer to an API route (`me` without a token: 401), which also pays for importing
 * and building that route group's app (see ROUTE_GROUPS in src/app.ts).
 */
async function measureStartup(config) {
  const variants = [
    { id: "lingua", label: "Lingua API", path: "/healthz", options: () => linguaOptions(config) },
    { id: "bareHono", label: "bare Hono", path: "/healthz", options: () => bareHonoOptions(config) },
    {
      id: "floor",
      label: "floor worker (diagnostic: D1 + DO bindings, tiny script)",
      path: "/bare",
      options: () => floorOptions(config),
    },
    {
      id: "linguaApi",
      label: "Lingua API, first request GET /api/auth/me → 401 (diagnostic)",
      path: "/api/auth/me",
      expect: 401,
      options: () => linguaOptions(config),
    },
  ];
  // One unrecorded start of each first (disk cache, lazy loading in this process), then rotate
  // the order so no variant always follows the same one.
  for (const v of variants) await timeFirstResponse(v.options(), v.path, v.expect);
  const samples = Object.fromEntries(variants.map((v) => [v.id, []]));
  for (let round = 0; round < settings.startupRounds; round++) {
    for (let i = 0; i < variants.length; i++) {
      const v = variants[(round + i) % variants.length];
      samples[v.id].push(await timeFirstResponse(v.options(), v.path, v.expect));
    }
  }
  const summary = {};
  for (const v of variants) {
    const list = samples[v.id];
    summary[v.id] = {
      label: v.label,
      medianTotalMs: median(list.map((s) => s.totalMs)),
      medianReadyMs: median(list.map((s) => s.readyMs)),
      medianFirstFetchMs: median(list.map((s) => s.firstFetchMs)),
      samples: list,
    };
  }
  const ratio = summary.lingua.medianTotalMs / summary.bareHono.medianTotalMs;
  return {
    rounds: settings.startupRounds,
    ...summary,
    ratio,
    max: STARTUP_GOAL.max,
    verdict: ratio <= STARTUP_GOAL.max ? "PASS" : "MISS",
  };
}

async function preflight(target, base, headers) {
  const response = await fetch(new URL(target.path, base), { headers });
  const text = await response.text();
  if (response.status !== 200)
    throw new Error(`${target.label} answered ${response.status} before the load: ${text.slice(0, 300)}`);
}

/**
 * Per target and concurrency: the rounds' raw results and the medians across rounds (p50, p99,
 * req/s) with the min–max of each, in TARGETS order.
 */
function summarize(runs, targets) {
  const summary = [];
  for (const target of targets) {
    for (const connections of settings.connections) {
      const rounds = Array.from(
        { length: settings.rounds },
        (_, round) =>
          runs.find((r) => r.target === target.id && r.connections === connections && r.round === round) ??
          null,
      );
      if (rounds.every((r) => !r)) continue;
      summary.push({
        target: target.id,
        label: target.label,
        connections,
        rounds: rounds.length,
        rps: spread(rounds.map((r) => r?.rps ?? null)),
        p50: spread(rounds.map((r) => r?.latencyMs.p50 ?? null)),
        mean: spread(rounds.map((r) => r?.latencyMs.mean ?? null)),
        p99: spread(rounds.map((r) => r?.latencyMs.p99 ?? null)),
      });
    }
  }
  return summary;
}

/**
 * Each goal's ratio per round, from that round's own numbers (ours and the floors measured in the
 * same round), and across rounds: `ratio` = median of the per-round ratios (the verdict basis) and
 * `ratioOfMedians` = the same formula applied to the medians across rounds (for reference).
 */
function evaluateGoals(runs, summary) {
  const run = (id, connections, round) =>
    runs.find((r) => r.target === id && r.connections === connections && r.round === round);
  const med = (id, connections) => summary.find((s) => s.target === id && s.connections === connections);
  const checks = [];
  for (const goal of GOALS) {
    for (const connections of settings.connections) {
      const subject = med(goal.subject, connections);
      const floors = goal.floors.map((f) => med(f, connections));
      if (!subject || floors.some((f) => !f)) continue;
      const { by, reference } = goalMetrics(goal, connections);
      for (const metric of [...by, ...reference]) {
        if (metric === "rps" && floors.length !== 1)
          throw new Error(`goal ${goal.id}: a req/s comparison needs exactly one floor`);
        const latency = metric !== "rps";
        // latency: ours / sum of the floors' (p50 or mean); throughput: floor req/s / ours (> 1 = slower than the floor).
        const formula = latency
          ? (ours, floorRuns) =>
              ours.latencyMs[metric] / floorRuns.reduce((sum, f) => sum + f.latencyMs[metric], 0)
          : (ours, floorRuns) => floorRuns[0].rps / ours.rps;
        const perRound = ratioAcrossRounds(settings.rounds, (round) => {
          const ours = run(goal.subject, connections, round);
          const floorRuns = goal.floors.map((f) => run(f, connections, round));
          return ours && floorRuns.every(Boolean) ? formula(ours, floorRuns) : null;
        });
        const ours = subject[metric].median;
        const floor = latency ? floors.reduce((sum, f) => sum + f[metric].median, 0) : floors[0].rps.median;
        const ratioOfMedians = latency ? ours / floor : floor / ours;
        const ratio = perRound.median;
        const counted = by.includes(metric);
        checks.push({
          goal: goal.id,
          text: goal.text,
          connections,
          metric,
          ours,
          floor,
          perRoundRatios: perRound.perRound,
          ratio,
          ratioBasis: "median of per-round ratios",
          ratioOfMedians,
          max: goal.max,
          verdict: !counted ? "(reference)" : ratio !== null && ratio <= goal.max ? "PASS" : "MISS",
        });
      }
    }
  }
  return checks;
}

// ---------------------------------------------------------------------------------------------
// Output

const ms = (v) => (v === null || v === undefined ? "-" : v.toFixed(3));
const rps = (v) => (v === null || v === undefined ? "-" : Math.round(v).toLocaleString("en-US"));

const spreadMs = (s) => (s.min === null ? "-" : `${s.min.toFixed(3)}–${s.max.toFixed(3)}`);
const ratioText = (v) => (v === null || v === undefined ? "-" : `${v.toFixed(2)}×`);

function printReport({ system, summary, runs, startup, checks, failures, tenantNote, selectionNote }) {
  const out = [];
  out.push(`Lingua API benchmark — ${system.date}`);
  out.push(
    `Machine: ${system.nproc} CPU(s), ${system.cpuModel}; Node ${system.node}; miniflare/workerd ${system.miniflare}; storage ${system.storage}`,
  );
  if (system.busyBefore !== null) {
    const busy = Math.round(system.busyBefore * 100);
    out.push(
      `CPU busy before the run: ${busy}% (load average ${system.loadAvg.map((l) => l.toFixed(2)).join(" ")})${busy > 20 ? " — WARNING: other work on this machine skews every figure below" : ""}`,
    );
  }
  if (summary.length)
    out.push(
      `Load: autocannon in a separate, long-lived Node process; connections ${settings.connections.join(" and ")}, pipelining 1. Per concurrency level: one ${settings.warmupS} s warm-up per target, then ${settings.rounds} round(s), each measuring every target once in a rotating order (each round starts at a different target), ${settings.settleS > 0 ? `${settings.settleS} s unrecorded lead-in + ` : ""}${settings.durationS} s measured per run.`,
    );
  const disturbed = runs.filter((r) => r.otherCpuShare !== null && r.otherCpuShare > OTHER_CPU_WARN);
  if (disturbed.length) {
    const worst = Math.max(...disturbed.map((r) => r.otherCpuShare));
    out.push(
      `WARNING: other work on this machine used more than ${Math.round(OTHER_CPU_WARN * 100)}% of the CPU during ${disturbed.length} of ${runs.length} run(s) (worst ${Math.round(worst * 100)}%): ${disturbed
        .map((r) => `${r.target} ×${r.connections} round ${r.round + 1}`)
        .join(
          ", ",
        )}. Medians across rounds damp this; the per-run shares are in results.json (otherCpuShare).`,
    );
  } else if (runs.length && runs.some((r) => r.otherCpuShare !== null)) {
    out.push(
      `CPU used by other work during the runs: at most ${Math.round(Math.max(...runs.map((r) => r.otherCpuShare ?? 0)) * 100)}% in any run.`,
    );
  }
  if (tenantNote) out.push(tenantNote);
  if (selectionNote) out.push(selectionNote);

  if (summary.length) {
    out.push(
      "",
      failures.length
        ? `!!! ${failures.length} run(s) answered something other than 200 or had errors; those figures are NOT valid:\n    ${failures.join("\n    ")}`
        : `Throughput and latency, medians across ${settings.rounds} round(s) (every response of every run was 200; latency from exact per-response times; p50 range = lowest–highest round)`,
    );
    out.push(
      formatTable(
        ["target", "conc", "req/s", "p50 ms", "p50 range ms", "p99 ms"],
        summary.map((r) => [
          r.label,
          r.connections,
          rps(r.rps.median),
          ms(r.p50.median),
          spreadMs(r.p50),
          ms(r.p99.median),
        ]),
      ),
    );
  }

  if (startup) {
    out.push(
      "",
      `Start-up: new Miniflare(...) → first answer read (/healthz; floor: /bare), ${startup.rounds} fresh starts each, medians`,
    );
    out.push(
      formatTable(
        ["worker", "total ms", "to ready ms", "first fetch ms"],
        [startup.lingua, startup.bareHono, startup.floor, startup.linguaApi].map((s) => [
          s.label,
          s.medianTotalMs.toFixed(1),
          s.medianReadyMs.toFixed(1),
          s.medianFirstFetchMs.toFixed(1),
        ]),
      ),
    );
  }

  const goalRows = checks.map((c) => [
    c.text,
    c.connections,
    c.metric === "rps" ? "req/s" : `${c.metric} latency`,
    c.metric === "rps" ? rps(c.ours) : ms(c.ours),
    c.metric === "rps" ? rps(c.floor) : ms(c.floor),
    c.perRoundRatios.map((r) => (r === null ? "-" : r.toFixed(2))).join(" "),
    ratioText(c.ratio),
    ratioText(c.ratioOfMedians),
    `${c.max}×`,
    c.verdict,
  ]);
  if (startup) {
    goalRows.push([
      STARTUP_GOAL.text,
      "-",
      "median ms",
      startup.lingua.medianTotalMs.toFixed(1),
      startup.bareHono.medianTotalMs.toFixed(1),
      "-",
      `${startup.ratio.toFixed(2)}×`,
      "-",
      `${startup.max}×`,
      startup.verdict,
    ]);
  }
  if (goalRows.length) {
    out.push(
      "",
      "Goals (ratio: latency = ours / floor; req/s = floor / ours; ≤ limit is PASS). Verdict basis: the median of the per-round",
      'ratios ("ratio"), each taken from ours and its floor measured in the same round; "of medians" = the ratio of the',
      "medians across rounds (ours / floor columns), for reference only. Start-up: ratio of the median fresh-start times.",
      "Above concurrency 1 a goal against one floor is decided by mean latency and req/s, its p50 reported for reference",
      "(every connection waits in workerd's one queue: UNDER_LOAD in scripts/bench/lib.mjs).",
    );
    out.push(
      formatTable(
        ["goal", "conc", "metric", "ours", "floor", "per round", "ratio", "of medians", "limit", "verdict"],
        goalRows,
      ),
    );
    const passed = goalRows.filter((r) => r[9] === "PASS").length;
    const counted = goalRows.filter((r) => r[9] === "PASS" || r[9] === "MISS").length;
    out.push(
      `${passed} of ${counted} checks PASS${counted < goalRows.length ? ` (rows marked "(reference)" are not counted)` : ""}.`,
    );
  }
  console.log(out.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// Main

async function main() {
  const { selected, added } = selectScenarios();
  const system = systemInfo();
  system.storage = storageBase();
  system.busyBefore = await cpuBusyShare(1000);
  const { createRequire } = await import("node:module");
  system.miniflare = createRequire(import.meta.url)("miniflare/package.json").version;
  const config = await readWranglerConfig();

  const targets = TARGETS.filter((t) => selected.has(t.id));
  const workersNeeded = new Set(targets.map((t) => t.worker));
  const wantStartup = selected.has("startup");
  const wantActivity = selected.has("activity");
  const wantWebhooks = selected.has("webhooks");
  const wantExports = selected.has("exports");
  const wantBulk = selected.has("bulk");
  const wantAnalytics = selected.has("analytics");
  const wantLti = selected.has("lti");
  const wantSso = selected.has("sso");
  const wantXapi = selected.has("xapi");
  const wantCapacity = selected.has("capacity");
  const wantBaseline = selected.has("baseline");
  if (wantActivity) workersNeeded.add("floor");

  console.error(`bench: bundling…`);
  await prepareBundles(
    workersNeeded.has("lingua") ||
      wantStartup ||
      wantActivity ||
      wantWebhooks ||
      wantExports ||
      wantBulk ||
      wantAnalytics ||
      wantLti ||
      wantSso ||
      wantXapi ||
      wantCapacity ||
      wantBaseline,
    wantStartup,
  );

  // Start-up first, while nothing else runs on the machine.
  let startup = null;
  if (wantStartup) {
    console.error(`bench: start-up, ${settings.startupRounds} rounds each…`);
    startup = await measureStartup(config);
  }

  const started = {};
  const runs = [];
  const failures = [];
  let loadGenerator = null;
  let activity = null;
  let webhooks = null;
  let exportsResult = null;
  let bulkResult = null;
  let analytics = null;
  let lti = null;
  let sso = null;
  let xapi = null;
  let capacity = null;
  let baseline = null;
  const stop = async () => {
    if (loadGenerator) await loadGenerator.close().catch(() => undefined);
    for (const w of Object.values(started)) await w.dispose().catch(() => undefined);
  };
  process.once("SIGINT", () => stop().finally(() => process.exit(130)));

  try {
    for (const name of workersNeeded) {
      console.error(`bench: starting ${WORKERS[name].label}…`);
      started[name] = await WORKERS[name].start({ config });
    }
    for (const target of targets) {
      const worker = started[target.worker];
      await preflight(target, worker.url, target.auth ? worker.auth : {});
      if (target.rotate)
        for (const Authorization of worker.rotateAuthorization)
          await preflight(target, worker.url, { Authorization });
    }

    if (targets.length || wantActivity || wantBaseline) loadGenerator = startLoadGenerator();
    const request = (target) => {
      const worker = started[target.worker];
      return {
        url: new URL(target.path, worker.url).toString(),
        headers: target.auth ? worker.auth : {},
        ...(target.rotate ? { rotateAuthorization: worker.rotateAuthorization } : {}),
      };
    };
    const check = (result, what) => {
      const problem = loadProblem(result);
      if (!problem) return;
      failures.push(`${what}: ${problem}`);
      console.error(`bench: FAILED ${what}: ${problem}`);
    };

    for (const connections of settings.connections) {
      await roundRobin({
        items: targets,
        rounds: settings.rounds,
        warmup:
          settings.warmupS > 0
            ? async (target) => {
                console.error(`bench: × ${connections} warm-up ${target.label}…`);
                const result = await loadGenerator.run({
                  ...request(target),
                  connections,
                  duration: settings.warmupS,
                  warmup: 0,
                });
                check(result, `${target.label} × ${connections} (warm-up)`);
              }
            : null,
        measure: async (target, { round, position }) => {
          console.error(`bench: × ${connections} round ${round + 1}/${settings.rounds} ${target.label}…`);
          const before = cpuSnapshot();
          const result = await loadGenerator.run({
            ...request(target),
            connections,
            duration: settings.durationS,
            warmup: settings.settleS,
          });
          result.otherCpuShare = otherCpuShare(before, cpuSnapshot());
          result.loadAvgAfter = os.loadavg();
          check(result, `${target.label} × ${connections}, round ${round + 1}`);
          const entry = {
            target: target.id,
            label: target.label,
            path: target.path,
            worker: target.worker,
            round,
            position,
            ...result,
          };
          runs.push(entry);
          return entry;
        },
      });
    }

    if (wantActivity) {
      const floorTargets = ["bare", "bare-plain", "do", "d1"].map((id) => {
        const t = TARGETS.find((x) => x.id === id);
        return { id, label: t.label, url: new URL(t.path, started.floor.url).toString() };
      });
      activity = await runActivity({
        config,
        scriptPath: build.lingua.scriptPath,
        settings,
        loadGenerator,
        floorTargets,
      });
      failures.push(...activity.failures);
    }

    if (wantWebhooks) {
      webhooks = await runWebhooks({ config, scriptPath: build.lingua.scriptPath });
      failures.push(...webhooks.failures);
    }
    if (wantExports) exportsResult = await runExports({ config, scriptPath: build.lingua.scriptPath });
    if (wantAnalytics) {
      analytics = await runAnalytics({ config, scriptPath: build.lingua.scriptPath });
      failures.push(...analytics.failures);
    }
    if (wantBulk) bulkResult = await runBulk({ config, scriptPath: build.lingua.scriptPath });
    if (wantLti) {
      lti = await runLti({ config, scriptPath: build.lingua.scriptPath });
      failures.push(...lti.failures);
    }
    if (wantSso) {
      sso = await runSso({ config, scriptPath: build.lingua.scriptPath });
      failures.push(...sso.failures);
    }
    if (wantXapi) {
      xapi = await runXapi({ config, scriptPath: build.lingua.scriptPath });
      failures.push(...xapi.failures);
    }
    if (wantCapacity) capacity = await runCapacity({ config, scriptPath: build.lingua.scriptPath });
    if (wantBaseline) {
      baseline = await runBaseline({ config, scriptPath: build.lingua.scriptPath, settings, loadGenerator });
      failures.push(...baseline.failures);
    }
  } finally {
    await stop();
  }

  const summary = summarize(runs, targets);
  const checks = evaluateGoals(runs, summary);
  const tenantNote = started.lingua
    ? `Bench tenant: enterprise plan with rate_limit_per_minute = ${BENCH_RATE_LIMIT_PER_MINUTE.toLocaleString("en-US")} (effectively unlimited), so no request is answered 429; what the token routes pay is the rate limiter's bookkeeping (the TokenGate object's decision per request, its buckets written to storage at most every 200 ms), not rejections.`
    : null;
  const selectionNote = settings.only
    ? `BENCH_ONLY=${settings.only.join(",")}${added.length ? ` (added the floors its goals need: ${added.join(", ")})` : ""}`
    : null;

  printReport({ system, summary, runs, startup, checks, failures, tenantNote, selectionNote });
  if (activity) console.log(activityReport(activity, settings, formatTable));
  if (webhooks) console.log(webhooksReport(webhooks));
  if (exportsResult) console.log(exportsReport(exportsResult, formatTable));
  if (analytics) console.log(analyticsReport(analytics, formatTable));
  if (bulkResult) console.log(bulkReport(bulkResult, formatTable));
  if (lti) console.log(ltiReport(lti));
  if (sso) console.log(ssoReport(sso));
  if (xapi) console.log(xapiReport(xapi));
  if (capacity) console.log(capacityReport(capacity, formatTable));
  if (baseline) console.log(baselineReport(baseline, formatTable));

  const results = {
    system,
    settings,
    bundles: {
      lingua: build.lingua ? { size: build.lingua.size, path: build.lingua.scriptPath } : null,
      bareHono: build.bareHono ? { path: build.bareHono.scriptPath } : null,
    },
    wrangler: {
      compatibilityDate: config.compatibilityDate,
      compatibilityFlags: config.compatibilityFlags,
      vars: config.vars,
      durableObjects: config.durableObjects,
    },
    lingua: started.lingua?.info ?? null,
    // Medians across rounds per target and concurrency (with each round's value in `values`).
    summary,
    // Every measured run: `round` (0-based) and `position` (place in that round's order) say when it ran.
    runs,
    startup,
    goals: checks,
    // BENCH_ONLY=activity: datasets, D1 meter probes, summary, runs and goals of the learning-activity scenario.
    activity,
    // BENCH_ONLY=webhooks: latency, burst, floor and API latency of the webhook pipeline.
    webhooks,
    // BENCH_ONLY=exports: every run of the exports scenario and its summary.
    exports: exportsResult,
    analytics,
    bulk: bulkResult,
    // BENCH_ONLY=lti: the launch callback against sign-in.
    lti,
    // BENCH_ONLY=sso: OIDC and SAML sign-ins, phase by phase, against password sign-in.
    sso,
    // BENCH_ONLY=xapi: recording with and without an endpoint, the forwarding burst and its floor.
    xapi,
    // BENCH_ONLY=capacity: bytes per table and index, rows per unit of growth, the capacity model.
    capacity,
    // BENCH_ONLY=baseline: the hot paths against the commit before issue 35, every run and ratio.
    baseline,
    failures,
  };
  const file = join(ensureDir(BENCH_OUT), "results.json");
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nRaw numbers: ${file}`);

  if (failures.length) {
    console.error(
      `\nbench: ${failures.length} run(s) had non-2xx responses or errors; the figures above are not valid:\n  ${failures.join("\n  ")}`,
    );
    process.exitCode = 1;
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
