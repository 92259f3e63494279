// The learning-activity scenario of `npm run bench` (BENCH_ONLY=activity; issue 3): the read routes
// a learner uses, on a small (~10k attempts) and a large (~1M attempts, 10,000 learners) dataset
// (scripts/bench/datasets.mjs). Each round measures every route as one group — the route on the
// small dataset, the floors of its goal, the route on the large dataset — so that each ratio comes
// from runs seconds apart; the groups' order rotates from round to round.
//
// Per dataset, one Miniflare runs three copies of the Lingua bundle on one copy of the dataset (one
// D1 database):
//   lingua-api          what is measured (Cache API on, as deployed)
//   lingua-api-nocache  the same bundle behind withEveryPageAMiss (scripts/bench/worker-wrappers.mjs:
//                       every request under an origin of its own, so no copy in the isolate's memory
//                       or the Cache API is found again) and Miniflare's Cache API off: every GET
//                       /api/public/courses runs the whole miss path — D1 read, JSON, ETag, storing
//                       the copy — and is answered `X-Cache: MISS` (checked); on a direct socket
//   lingua-api-meter    the same bundle behind withD1Meter (scripts/bench/worker-wrappers.mjs): only single probe requests, for
//                       the X-D1-Queries / X-D1-Rows-Read of each route; never under load (the
//                       uncached catalogue is its first catalogue request, a miss; the hit its second)
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { DEMO_PASSWORD } from "../demo-data.mjs";
import { datasetSpecs, ensureDataset, linguaWorker } from "./datasets.mjs";
import {
  cpuSnapshot,
  loadProblem,
  median,
  otherCpuShare,
  ratioAcrossRounds,
  requestJson,
  roundRobin,
  spread,
  storageBase,
} from "./lib.mjs";

const BENCH_INSTITUTION = "ins_demo_initech";

const ALL_ROUTES = [
  { id: "courses", label: "GET /api/courses", path: () => "/api/courses", auth: true },
  {
    id: "public-hit",
    label: "GET /api/public/courses (cache hit)",
    path: () => "/api/public/courses",
    floors: ["bare"],
    max: 1.2,
  },
  {
    id: "public-miss",
    label: "GET /api/public/courses (uncached)",
    path: () => "/api/public/courses",
    worker: "nocache",
  },
  {
    id: "lesson-progress",
    label: "GET /api/courses/{id}/lesson-progress",
    path: (d) => `/api/courses/${d.courseId}/lesson-progress`,
    auth: true,
  },
  { id: "cefr", label: "GET /api/cefr/report", path: () => "/api/cefr/report", auth: true },
  { id: "stats", label: "GET /api/gamification/stats", path: () => "/api/gamification/stats", auth: true },
  {
    id: "leaderboard",
    label: "GET /api/gamification/leaderboard",
    path: () => "/api/gamification/leaderboard",
    auth: true,
  },
];
// BENCH_ACTIVITY_ROUTES=public-hit,leaderboard measures only these routes (their floors come along).
const ROUTES = process.env.BENCH_ACTIVITY_ROUTES
  ? ALL_ROUTES.filter((route) => process.env.BENCH_ACTIVITY_ROUTES.split(",").includes(route.id))
  : ALL_ROUTES;
const AUTH_GOAL = { floors: ["do", "d1"], max: 1.25 };
const FLAT_MAX = 1.3;

/** Copies the dataset and starts the three workers on it; returns what the targets need. */
async function startDataset(dataset, { config, scriptPath }) {
  const storage = mkdtempSync(join(storageBase(), `lingua-bench-${dataset.spec.name}-`));
  const copyStarted = performance.now();
  cpSync(dataset.dir, storage, { recursive: true });
  const copyMs = performance.now() - copyStarted;
  const mf = new Miniflare({
    workers: [
      linguaWorker(config, scriptPath),
      linguaWorker(config, scriptPath, {
        name: "lingua-api-nocache",
        wrapper: "miss",
        cache: false,
        directSocket: true,
      }),
      linguaWorker(config, scriptPath, {
        name: "lingua-api-meter",
        wrapper: "meter",
        directSocket: true,
      }),
    ],
    host: "127.0.0.1",
    port: 0,
    defaultPersistRoot: storage,
  });
  const dispose = async () => {
    try {
      await mf.dispose();
    } finally {
      rmSync(storage, { recursive: true, force: true });
    }
  };
  try {
    const urls = {
      main: new URL(await mf.ready),
      nocache: await mf.unsafeGetDirectURL("lingua-api-nocache"),
      meter: await mf.unsafeGetDirectURL("lingua-api-meter"),
    };
    const d1 = await mf.getD1Database("DB");
    // A learner with activity: the median-XP learner of the enterprise institution, whose per-token
    // limit is lifted here (in this copy only) so no measured request is answered 429.
    await d1
      .prepare("UPDATE institutions SET rate_limit_per_minute = 1000000000 WHERE id = ?")
      .bind(BENCH_INSTITUTION)
      .run();
    const active = await d1
      .prepare(
        "SELECT u.id, u.email, ls.xp_total AS xp FROM learner_stats ls JOIN users u ON u.id = ls.user_id WHERE u.institution_id = ? AND ls.xp_total > 0 ORDER BY ls.xp_total, u.id",
      )
      .bind(BENCH_INSTITUTION)
      .all();
    const learner = active.results[Math.floor(active.results.length / 2)];
    if (!learner)
      throw new Error(`dataset ${dataset.spec.name} has no active learner of ${BENCH_INSTITUTION}`);
    const course = await d1
      .prepare(
        "SELECT course_id FROM course_progress WHERE user_id = ? ORDER BY last_activity_at DESC LIMIT 1",
      )
      .bind(learner.id)
      .first();
    const members = (
      await d1
        .prepare("SELECT count(*) AS n FROM users WHERE institution_id = ?")
        .bind(BENCH_INSTITUTION)
        .first()
    ).n;
    const signIn = await requestJson(new URL("/api/auth/sign-in", urls.main), {
      method: "POST",
      body: { email: learner.email, password: DEMO_PASSWORD },
    });
    return {
      spec: dataset.spec,
      meta: dataset.meta,
      urls,
      auth: { Authorization: `Bearer ${signIn.body.token}` },
      courseId: course.course_id,
      learner: {
        id: learner.id,
        xp: learner.xp,
        institution: BENCH_INSTITUTION,
        institutionMembers: members,
        activeInInstitution: active.results.length,
      },
      copyMs,
      dispose,
    };
  } catch (error) {
    await dispose().catch(() => undefined);
    throw error;
  }
}

async function probe(url, headers) {
  const response = await fetch(url, { headers });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${text.slice(0, 300)}`);
  const n = (name) => (response.headers.get(name) === null ? null : Number(response.headers.get(name)));
  return {
    queries: n("X-D1-Queries"),
    rowsRead: n("X-D1-Rows-Read"),
    rowsWritten: n("X-D1-Rows-Written"),
    unmetered: n("X-D1-Unmetered") ?? 0,
    cache: response.headers.get("X-Cache"),
    bytes: text.length,
  };
}

/**
 * Runs the scenario. `floorTargets` are the floor worker's targets ({ id, label, url }), measured
 * inside each route's group. Returns everything for the report and results.json.
 */
export async function runActivity({
  config,
  scriptPath,
  settings,
  loadGenerator,
  floorTargets,
  log = (m) => console.error(m),
}) {
  const specs = datasetSpecs();
  const datasets = [];
  for (const spec of [specs.small, specs.large])
    datasets.push(await ensureDataset(spec, { config, scriptPath, log }));

  const started = [];
  try {
    for (const dataset of datasets) {
      log(
        `bench: starting Lingua on dataset ${dataset.spec.name} (${dataset.meta.recorded.toLocaleString("en-US")} attempts)…`,
      );
      started.push(await startDataset(dataset, { config, scriptPath }));
    }

    // Rows read per request, from the metered copy: the second request of each route (the first
    // for the uncached catalogue, which on the metered copy is a miss; its second is a hit).
    const meter = {};
    for (const d of started) {
      meter[d.spec.name] = {};
      // The uncached catalogue first: on the metered copy its first request is the miss, its second a hit.
      for (const route of [...ROUTES].sort((x, y) => (y.id === "public-miss") - (x.id === "public-miss"))) {
        const url = new URL(route.path(d), d.urls.meter);
        const headers = route.auth ? d.auth : {};
        if (route.id === "public-miss") {
          meter[d.spec.name][route.id] = await probe(url, headers);
          if (meter[d.spec.name][route.id].cache !== "MISS")
            throw new Error(`metered catalogue probe was not a miss (${meter[d.spec.name][route.id].cache})`);
          continue;
        }
        await probe(url, headers);
        meter[d.spec.name][route.id] = await probe(url, headers);
        if (route.id === "public-hit" && meter[d.spec.name][route.id].cache !== "HIT")
          throw new Error("metered catalogue probe was not a hit");
      }
    }

    // One group per route: the route on the small dataset, the floors its goal divides by, the route
    // on the large dataset. A round measures each group in one go, so a route's ratios are taken
    // from runs seconds apart rather than a round apart (on this machine the floors themselves
    // drift by a third within minutes). Floors are therefore measured once per group that needs them.
    // The catalogue hit is also measured beside the floor without Lingua's headers, for reference.
    const floorsOf = (route) =>
      route.id === "public-hit" ? ["bare", "bare-plain"] : route.auth ? AUTH_GOAL.floors : [];
    const routeTarget = (route, d) => ({
      id: `${route.id}@${d.spec.name}`,
      route: route.id,
      dataset: d.spec.name,
      label: `${route.label} [${d.spec.name}]`,
      url: new URL(route.path(d), route.worker === "nocache" ? d.urls.nocache : d.urls.main).toString(),
      headers: route.auth ? d.auth : {},
    });
    const groups = ROUTES.map((route) => {
      const [small, large] = started.map((d) => routeTarget(route, d));
      return {
        id: route.id,
        label: route.label,
        targets: [small, ...floorsOf(route).map((id) => floorTargets.find((f) => f.id === id)), large],
      };
    });
    const targets = [...new Set(groups.flatMap((g) => g.targets))];
    for (const t of targets) {
      const response = await fetch(t.url, { headers: t.headers ?? {} });
      const body = await response.text();
      if (response.status !== 200)
        throw new Error(`${t.label} answered ${response.status} before the load: ${body.slice(0, 300)}`);
      if (t.route === "public-hit" && response.headers.get("X-Cache") !== "HIT") {
        const again = await fetch(t.url);
        await again.text();
        if (again.headers.get("X-Cache") !== "HIT")
          throw new Error(`${t.label}: no cache hit (X-Cache ${again.headers.get("X-Cache")})`);
      }
      if (t.route === "public-miss") {
        // Twice: a copy kept by the first answer would make the second a hit.
        const again = await fetch(t.url);
        await again.text();
        for (const r of [response, again]) {
          if (r.headers.get("X-Cache") !== "MISS")
            throw new Error(
              `${t.label}: X-Cache ${r.headers.get("X-Cache")}, expected MISS (every page a miss)`,
            );
        }
      }
    }

    const runs = [];
    const failures = [];
    for (const connections of settings.connections) {
      for (const t of targets) {
        if (settings.warmupS <= 0) break;
        log(`bench: activity × ${connections} warm-up ${t.label}…`);
        const result = await loadGenerator.run({
          url: t.url,
          headers: t.headers ?? {},
          connections,
          duration: settings.warmupS,
          warmup: 0,
        });
        const problem = loadProblem(result);
        if (problem) failures.push(`${t.label} × ${connections} (warm-up): ${problem}`);
      }
      await roundRobin({
        items: groups,
        rounds: settings.rounds,
        warmup: null,
        measure: async (group, { round, position }) => {
          for (const t of group.targets) {
            log(
              `bench: activity × ${connections} round ${round + 1}/${settings.rounds} ${group.label}: ${t.label}…`,
            );
            const before = cpuSnapshot();
            const result = await loadGenerator.run({
              url: t.url,
              headers: t.headers ?? {},
              connections,
              duration: settings.durationS,
              warmup: settings.settleS,
            });
            result.otherCpuShare = otherCpuShare(before, cpuSnapshot());
            result.loadAvgAfter = os.loadavg();
            const problem = loadProblem(result);
            if (problem) failures.push(`${t.label} × ${connections}, round ${round + 1}: ${problem}`);
            runs.push({ target: t.id, label: t.label, group: group.id, round, position, ...result });
          }
        },
      });
    }

    // Medians across rounds.
    const summary = [];
    for (const t of targets) {
      for (const connections of settings.connections) {
        const rounds = runs.filter((x) => x.target === t.id && x.connections === connections);
        summary.push({
          target: t.id,
          label: t.label,
          connections,
          rps: spread(rounds.map((r) => r?.rps ?? null)),
          p50: spread(rounds.map((r) => r?.latencyMs.p50 ?? null)),
          mean: spread(rounds.map((r) => r?.latencyMs.mean ?? null)),
          p99: spread(rounds.map((r) => r?.latencyMs.p99 ?? null)),
        });
      }
    }

    // Goals, each from per-round ratios.
    const run = (group, id, c, r) =>
      runs.find((x) => x.group === group && x.target === id && x.connections === c && x.round === r);
    const medianOf = (id, c, metric) =>
      summary.find((s) => s.target === id && s.connections === c)?.[metric].median ?? null;
    const checks = [];
    // Against one floor, p50 latency; against the sum of two (a DO round trip plus a D1 round trip),
    // mean latency, because means add up and medians do not (see API_GOALS in lib.mjs). The p50 ratio is
    // reported beside every check for reference.
    const ratioCheck = (text, connections, group, subject, floors, max, kind) => {
      const metric = floors.length > 1 ? "mean" : "p50";
      const ratiosBy = (m) =>
        ratioAcrossRounds(settings.rounds, (r) => {
          const ours = run(group, subject, connections, r);
          const fl = floors.map((f) => run(group, f, connections, r));
          return ours && fl.every(Boolean)
            ? ours.latencyMs[m] / fl.reduce((s, f) => s + f.latencyMs[m], 0)
            : null;
        });
      const perRound = ratiosBy(metric);
      const ours = medianOf(subject, connections, metric);
      const floor = floors.reduce((s, f) => s + (medianOf(f, connections, metric) ?? NaN), 0);
      checks.push({
        kind,
        text,
        connections,
        metric,
        ours,
        floor,
        perRoundRatios: perRound.perRound,
        ratio: perRound.median,
        ratioOfMedians: ours / floor,
        p50Ratio: metric === "p50" ? perRound.median : ratiosBy("p50").median,
        max,
        verdict:
          kind === "reference"
            ? "(reference)"
            : perRound.median !== null && perRound.median <= max
              ? "PASS"
              : "MISS",
      });
    };
    for (const connections of settings.connections) {
      for (const route of ROUTES) {
        for (const d of started) {
          const id = `${route.id}@${d.spec.name}`;
          if (route.id === "public-hit") {
            ratioCheck(
              `catalog hit [${d.spec.name}] ≤ 1.2× floor /bare`,
              connections,
              route.id,
              id,
              ["bare"],
              1.2,
              "floor",
            );
            ratioCheck(
              `catalog hit [${d.spec.name}] ≤ 1.2× floor /bare-plain`,
              connections,
              route.id,
              id,
              ["bare-plain"],
              1.2,
              "reference",
            );
          } else if (route.auth)
            ratioCheck(
              `${route.id} [${d.spec.name}] ≤ 1.25× (/do + /d1)`,
              connections,
              route.id,
              id,
              AUTH_GOAL.floors,
              AUTH_GOAL.max,
              "floor",
            );
        }
        ratioCheck(
          `${route.id}: large / small ≤ ${FLAT_MAX}×`,
          connections,
          route.id,
          `${route.id}@large`,
          [`${route.id}@small`],
          FLAT_MAX,
          "flat",
        );
      }
    }
    const rowChecks = [];
    for (const route of ROUTES) {
      const s = meter.small[route.id];
      const l = meter.large[route.id];
      const zero = route.id === "public-hit";
      const verdict = zero
        ? s.queries === 0 && l.queries === 0
          ? "PASS"
          : "MISS"
        : l.rowsRead <= Math.max(s.rowsRead * FLAT_MAX, s.rowsRead + 0)
          ? "PASS"
          : "MISS";
      rowChecks.push({
        route: route.id,
        label: route.label,
        small: s,
        large: l,
        rule: zero ? "zero D1 queries" : `rows read large ≤ ${FLAT_MAX}× small`,
        verdict,
      });
    }

    return {
      datasets: started.map((d) => ({
        name: d.spec.name,
        spec: d.spec,
        meta: d.meta,
        cached: datasets.find((x) => x.spec.name === d.spec.name).cached,
        dir: datasets.find((x) => x.spec.name === d.spec.name).dir,
        learner: d.learner,
        courseId: d.courseId,
        copyMs: d.copyMs,
      })),
      meter,
      targets: targets.map((t) => ({ id: t.id, label: t.label, url: t.url })),
      summary,
      runs,
      checks,
      rowChecks,
      failures,
    };
  } finally {
    for (const d of started) await d.dispose().catch(() => undefined);
  }
}

const ms = (v) => (v === null || v === undefined || !Number.isFinite(v) ? "-" : v.toFixed(3));
const rps = (v) => (v === null || v === undefined ? "-" : Math.round(v).toLocaleString("en-US"));

export function activityReport(result, settings, formatTable) {
  const out = [];
  out.push("", "Learning activity (issue 3): datasets");
  out.push(
    formatTable(
      [
        "dataset",
        "learners",
        "attempts",
        "learner_stats",
        "item_progress",
        "build",
        "bench learner (initech)",
        "its XP",
        "initech members",
      ],
      result.datasets.map((d) => [
        d.name,
        d.meta.learners.toLocaleString("en-US"),
        d.meta.counts.attempts.toLocaleString("en-US"),
        d.meta.counts.learner_stats.toLocaleString("en-US"),
        d.meta.counts.item_progress.toLocaleString("en-US"),
        d.cached
          ? `cached (built in ${d.meta.buildSeconds.toFixed(0)} s, ${Math.round(d.meta.attemptsPerSecond)}/s)`
          : `built now in ${d.meta.buildSeconds.toFixed(1)} s (${Math.round(d.meta.attemptsPerSecond)} attempts/s)`,
        d.learner.id,
        d.learner.xp,
        d.learner.institutionMembers.toLocaleString("en-US"),
      ]),
    ),
  );
  out.push(
    "",
    result.failures.length
      ? `!!! ${result.failures.length} run(s) answered something other than 200 or had errors; those figures are NOT valid:\n    ${result.failures.join("\n    ")}`
      : `Learning activity: medians across ${settings.rounds} round(s), a floor's across every group that measured it (every response 200). "uncached" = the same bundle behind a wrapper that sends every request under an origin of its own, with Miniflare's Cache API off: every request is a miss, produced from D1 (on a direct socket, without Miniflare's entry hop).`,
  );
  out.push(
    formatTable(
      ["target", "conc", "req/s", "p50 ms", "p50 range ms", "p99 ms"],
      result.summary.map((r) => [
        r.label,
        r.connections,
        rps(r.rps.median),
        ms(r.p50.median),
        r.p50.min === null ? "-" : `${r.p50.min.toFixed(3)}–${r.p50.max.toFixed(3)}`,
        ms(r.p99.median),
      ]),
    ),
  );
  out.push(
    "",
    "D1 per request (metered copy, one probe each: queries / rows read / rows written; statements inside Durable Objects not counted)",
  );
  out.push(
    formatTable(
      ["route", "small q", "small rows read", "large q", "large rows read", "rule", "verdict"],
      result.rowChecks.map((c) => [
        c.label,
        c.small.queries,
        c.small.rowsRead,
        c.large.queries,
        c.large.rowsRead,
        c.rule,
        c.verdict,
      ]),
    ),
  );
  out.push(
    "",
    "Learning-activity goals (verdict = median of per-round ratios; against one floor p50 latency, against the sum of two floors mean latency; the p50 ratio for reference)",
  );
  const times = (r) => (r === null || r === undefined ? "-" : `${r.toFixed(2)}×`);
  out.push(
    formatTable(
      ["goal", "conc", "metric", "ours", "floor", "per round", "ratio", "limit", "verdict", "p50 ratio"],
      result.checks.map((c) => [
        c.text,
        c.connections,
        c.metric,
        ms(c.ours),
        ms(c.floor),
        c.perRoundRatios.map((r) => (r === null ? "-" : r.toFixed(2))).join(" "),
        times(c.ratio),
        `${c.max}×`,
        c.verdict,
        times(c.p50Ratio),
      ]),
    ),
  );
  const all = [...result.checks, ...result.rowChecks].filter((c) => c.verdict !== "(reference)");
  out.push(
    `${all.filter((c) => c.verdict === "PASS").length} of ${all.length} learning-activity checks PASS (rows marked "(reference)" are not counted).`,
  );
  return out.join("\n");
}

export { median };
