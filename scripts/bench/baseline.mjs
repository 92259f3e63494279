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
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import { basename, join } from "node:path";
import { hashPassword } from "../demo-data.mjs";
import {
  allProcStats,
  BENCH_OUT,
  bundleWithWrangler,
  cpuSnapshot,
  ensureDir,
  linguaOptions,
  loadProblem,
  median,
  migrateEveryDatabase,
  otherCpuShare,
  procStat,
  ROOT,
  randomKey,
  ratioAcrossRounds,
  readWranglerConfig,
  requestJson,
  rotatingOrder,
  spread,
  startWorker,
  withProfilingEntry,
} from "./lib.mjs";
import { BENCH_RATE_LIMIT_PER_MINUTE } from "./seed.mjs";
import { d1RoundTripsEntry } from "./sso-profile.mjs";
import { startCpuProfiles, summary } from "./xapi-profile.mjs";

const BASELINE_REV = process.env.BENCH_BASELINE_COMMIT || "722e280^";
const ATTEMPT_REQUESTS = Number(process.env.BENCH_BASELINE_REQUESTS || 10);
const ATTEMPT_WARMUP = 3;
const ATTEMPTS_PER_REQUEST = 100;
const EXTRA_TOKENS = 30;
const GOAL = 1.1;
const PROFILE = process.env.BENCH_BASELINE_PROFILE || "";
const PROFILE_PORTS = { baseline: 9341, current: 9342 };
const COURSE = "crs_bench_base";
const LESSON = "les_bb_1";

function git(args, cwd = ROOT) {
  const result = spawnSync("git", args, { cwd, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`git ${args.join(" ")} failed: ${result.stderr.trim()}`);
  return result.stdout.trim();
}

/**
 * The baseline commit's bundle, built from its own source in a temporary worktree; answers
 * { commit, subject, scriptPath, size, config } with the config's migrations copied out of the
 * worktree (which is removed before this returns).
 */
async function buildBaseline(log) {
  const commit = git(["rev-parse", "--verify", `${BASELINE_REV}^{commit}`]);
  const subject = git(["log", "-1", "--format=%s", commit]);
  const dir = mkdtempSync(join(os.tmpdir(), "lingua-baseline-"));
  const out = ensureDir(join(BENCH_OUT, "dist", "baseline"));
  log(`bench: baseline ${commit.slice(0, 7)} (${subject.slice(0, 60)}…): worktree in ${dir}, bundling…`);
  git(["worktree", "add", "--detach", dir, commit]);
  try {
    symlinkSync(realpathSync(join(ROOT, "node_modules")), join(dir, "node_modules"), "dir");
    const bundle = bundleWithWrangler(join(out, "lingua"), { cwd: dir });
    const config = await readWranglerConfig(join(dir, "wrangler.toml"));
    // Its migrations, as that commit had them, kept beside the bundle.
    const migrationDirs = {};
    for (const [binding, from] of Object.entries(config.migrationDirs)) {
      const to = join(out, `migrations-${binding}`);
      rmSync(to, { recursive: true, force: true });
      cpSync(from, to, { recursive: true });
      migrationDirs[binding] = to;
    }
    return { commit, subject, ...bundle, config: { ...config, migrationDirs } };
  } finally {
    rmSync(join(dir, "node_modules"), { force: true });
    const removed = spawnSync("git", ["worktree", "remove", "--force", dir], { cwd: ROOT, encoding: "utf8" });
    if (removed.status !== 0) {
      rmSync(dir, { recursive: true, force: true });
      spawnSync("git", ["worktree", "prune"], { cwd: ROOT });
    }
  }
}

/**
 * One bench tenant in `d1` (DB or another database of the current worker, placed there through the
 * directory in `home`): an enterprise institution, its admin signed in, EXTRA_TOKENS API tokens,
 * `memberCount` learners, and the 100-item course (the catalogue is in every database).
 */
async function seedTenant({ home, d1, baseUrl, id, binding, memberCount, withCourse }) {
  const password = `bench-${randomKey().slice(0, 12)}`;
  const slug = id.replace(/_/g, "-");
  const admin = { id: `usr_${id}_admin`, email: `admin@${slug}.lingua.test` };
  const members = Array.from({ length: memberCount }, (_, i) => ({
    id: `usr_${id}_m${String(i).padStart(3, "0")}`,
    email: `m${String(i).padStart(3, "0")}@${slug}.lingua.test`,
  }));
  if (binding !== "DB") {
    // As test/helpers/tenants.ts places one: the directory entry first, each address's key in DB.
    const now = new Date().toISOString();
    await home.batch([
      home
        .prepare("INSERT INTO institution_databases (institution_id, binding, updated_at) VALUES (?, ?, ?)")
        .bind(id, binding, now),
      ...[admin, ...members].map((u) =>
        home
          .prepare("INSERT INTO directory_keys (kind, key, institution_id) VALUES ('email', ?, ?)")
          .bind(u.email, id),
      ),
    ]);
  }
  const statements = [
    d1
      .prepare(
        "INSERT INTO institutions (id, slug, name, plan, rate_limit_per_minute) VALUES (?, ?, ?, 'enterprise', ?)",
      )
      .bind(id, slug, `Bench ${binding}`, BENCH_RATE_LIMIT_PER_MINUTE),
    d1
      .prepare(
        "INSERT INTO users (id, email, name, role, institution_id, password_hash) VALUES (?, ?, 'Bench Admin', 'institution_admin', ?, ?)",
      )
      .bind(admin.id, admin.email, id, hashPassword(password)),
    ...members.map((m, i) =>
      d1
        .prepare(
          "INSERT INTO users (id, email, name, role, institution_id, password_hash) VALUES (?, ?, ?, 'learner', ?, 'x')",
        )
        .bind(m.id, m.email, `Learner ${i}`, id),
    ),
  ];
  if (withCourse) statements.push(...courseStatements(d1));
  for (let i = 0; i < statements.length; i += 200) await d1.batch(statements.slice(i, i + 200));

  const signIn = await requestJson(new URL("/api/auth/sign-in", baseUrl), {
    method: "POST",
    body: { email: admin.email, password },
  });
  const auth = { Authorization: `Bearer ${signIn.body.token}` };
  for (let i = 1; i <= EXTRA_TOKENS; i++)
    await requestJson(new URL("/api/integrations/tokens", baseUrl), {
      method: "POST",
      headers: auth,
      body: { name: `bench token ${String(i).padStart(2, "0")}`, abilities: ["tokens:read"] },
      expect: 201,
    });
  // The tenant must look as intended, wherever it lives, before anything is measured.
  const me = await requestJson(new URL("/api/auth/me", baseUrl), { headers: auth });
  if (me.body.rate_limit?.limit !== BENCH_RATE_LIMIT_PER_MINUTE)
    throw new Error(`${id}: rate limit ${JSON.stringify(me.body.rate_limit)}`);
  const tokens = await requestJson(new URL("/api/integrations/tokens", baseUrl), { headers: auth });
  if (tokens.body.meta?.total !== EXTRA_TOKENS + 1)
    throw new Error(`${id}: token list total ${tokens.body.meta?.total}, expected ${EXTRA_TOKENS + 1}`);
  const list = await requestJson(new URL(`/api/institutions/${id}/members`, baseUrl), { headers: auth });
  if (list.body.meta?.total !== memberCount + 1)
    throw new Error(`${id}: member list total ${list.body.meta?.total}, expected ${memberCount + 1}`);
  return {
    id,
    binding,
    d1,
    base: baseUrl,
    auth,
    members: members.map((m) => m.id),
    tokensShown: `${tokens.body.data.length} of ${tokens.body.meta.total}`,
    membersShown: `${list.body.data.length} of ${list.body.meta.total}`,
  };
}

/** A published course of one lesson with 100 items (as scripts/bench/xapi.mjs seeds one). */
function courseStatements(d1) {
  return [
    d1
      .prepare(
        "INSERT INTO courses (id, slug, title, description, target_language, source_language, cefr_from, cefr_to, published, published_at, lesson_count, item_count, estimated_minutes, tags) VALUES (?, 'bench-base', 'Spanish for beginners', 'Bench course.', 'es', 'en', 'A1', 'A1', 1, ?, 1, ?, ?, '[]')",
      )
      .bind(COURSE, new Date().toISOString(), ATTEMPTS_PER_REQUEST, ATTEMPTS_PER_REQUEST * 2),
    d1
      .prepare(
        "INSERT INTO lessons (id, course_id, position, title, cefr_level, objectives, item_count, estimated_minutes) VALUES (?, ?, 1, 'Greetings and introductions', 'A1', '[]', ?, ?)",
      )
      .bind(LESSON, COURSE, ATTEMPTS_PER_REQUEST, ATTEMPTS_PER_REQUEST * 2),
    d1
      .prepare(
        "INSERT INTO trainings (id, lesson_id, course_id, position, kind, title, item_count) VALUES ('trn_bb_1', ?, ?, 1, 'practice', 'Block', ?)",
      )
      .bind(LESSON, COURSE, ATTEMPTS_PER_REQUEST),
    ...ITEMS.map((id, i) =>
      d1
        .prepare(
          "INSERT INTO training_items (id, training_id, lesson_id, course_id, position, type, skill, cefr_level, xp, content) VALUES (?, 'trn_bb_1', ?, ?, ?, 'vocabulary', 'reading', 'A1', 10, ?)",
        )
        .bind(
          id,
          LESSON,
          COURSE,
          i + 1,
          JSON.stringify({
            prompt: `What does «la palabra ${i}» mean?`,
            options: ["the word", "the world", "the sword"],
            answer: "the word",
          }),
        ),
    ),
  ];
}

const ITEMS = Array.from({ length: ATTEMPTS_PER_REQUEST }, (_, i) => `itm_bb_${String(i).padStart(3, "0")}`);

/** The learning-activity write: 100 attempts for a member, as the admin; its latency in ms. */
async function recordAttempts(tenant, userId) {
  const occurredAt = new Date(Date.now() - 60_000).toISOString();
  const body = {
    user_id: userId,
    attempts: ITEMS.map((id, i) => ({
      id: crypto.randomUUID(),
      training_item_id: id,
      score: i % 5 === 4 ? 0.8 : 1,
      correct: true,
      duration_seconds: 15 + (i % 40),
      occurred_at: occurredAt,
    })),
  };
  const started = performance.now();
  const response = await fetch(new URL("/api/progress/attempts", tenant.base), {
    method: "POST",
    headers: { ...tenant.auth, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const ms = performance.now() - started;
  if (response.status !== 200)
    throw new Error(`${tenant.id}: attempts answered ${response.status}: ${text.slice(0, 300)}`);
  return ms;
}

/** Waits until every outbox event of the tenant's database is dispatched (at most 30 s). */
async function drained(tenant) {
  const deadline = performance.now() + 30_000;
  for (;;) {
    const row = await tenant.d1
      .prepare("SELECT count(*) AS n FROM outbox_events WHERE dispatched_at IS NULL")
      .first();
    if (row.n === 0) return;
    if (performance.now() > deadline)
      throw new Error(`${tenant.id}: ${row.n} outbox event(s) still undispatched after 30 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

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
    if (PROFILE) return await profilePaths({ tenants, variants, settings, loadGenerator, baseline, log });

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

const num = (metric, v) =>
  v === null || v === undefined
    ? "-"
    : metric === "rps"
      ? Math.round(v).toLocaleString("en-US")
      : v.toFixed(3);
const times = (v) => (v === null || v === undefined ? "-" : `${v.toFixed(2)}×`);

/**
 * BENCH_BASELINE_PROFILE: each path at the highest concurrency on each worker (after a warm-up),
 * workerd's inspector sampling the worker's and D1's isolates; the top functions per request.
 */
async function profilePaths({ tenants, variants, settings, loadGenerator, baseline, log }) {
  const connections = Math.max(...settings.connections);
  const profiles = [];
  for (const path of PATHS)
    for (const variant of variants.filter((v) => v.id !== "current-db1")) {
      const tenant = tenants[variant.id];
      const request = {
        url: new URL(path.path(tenant), tenant.base).toString(),
        headers: tenant.auth,
        connections,
      };
      await loadGenerator.run({ ...request, duration: settings.warmupS || 1, warmup: 0 });
      // One request alone: its D1 round trips and statements in DB (the worker's, not its Durable Objects').
      // (After the load's last requests have finished: autocannon stops with some still in flight.)
      const counts = new URL("/__d1-statements", tenant.base);
      await new Promise((r) => setTimeout(r, 2000));
      await requestJson(counts);
      await requestJson(new URL(request.url), { headers: tenant.auth });
      const d1 = (await requestJson(counts)).body;
      log(`bench: baseline profile ${path.label} [${variant.label}]…`);
      const profiler = await startCpuProfiles(PROFILE_PORTS[variant.id], /lingua-api$|d1:db$/);
      const result = await loadGenerator.run({ ...request, duration: settings.durationS, warmup: 0 });
      const taken = await profiler.stop();
      for (const [title, profile] of Object.entries(taken)) {
        const file = `${PROFILE}.${variant.id}.${path.id}.${title.replace(/[^a-z0-9-]+/gi, "_")}.cpuprofile`;
        writeFileSync(file, JSON.stringify(profile));
        const top = summary(profile, 25);
        profiles.push({
          variant: variant.id,
          path: path.id,
          label: path.label,
          isolate: title,
          file,
          requests: result.requests,
          d1RoundTrips: d1.roundTrips,
          d1Statements: d1.statements.map((x) => `${x.statements}× ${x.sql}`),
          cpuMsPerRequest: top.totalMs / result.requests,
          self: top.self,
          inclusive: top.inclusive,
        });
      }
    }
  return {
    profileOnly: true,
    baseline: { commit: baseline.commit, subject: baseline.subject, rev: BASELINE_REV },
    current: { commit: git(["rev-parse", "HEAD"]), dirty: git(["status", "--porcelain"]) !== "" },
    profiles,
    failures: [],
  };
}

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
