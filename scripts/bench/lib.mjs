// Building blocks of `npm run bench`: bundling, starting workers under Miniflare, D1 migrations,
// HTTP helpers, the load-generator process and machine information. run.mjs composes them; new
// benchmarks (routes, datasets) should only need new targets and goals there.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from "node:fs";
import os from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { databaseIndexStatements } from "../database-index.mjs";
import { benchEntrySource } from "./worker-wrappers.mjs";

export const BENCH_SCRIPTS = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(BENCH_SCRIPTS, "..", "..");
export const BENCH_OUT = join(ROOT, ".bench");

// ---------------------------------------------------------------------------------------------
// Configuration from wrangler.toml

/**
 * The parts of wrangler.toml a local run needs, read with wrangler's own parser so the bench
 * never drifts from what `wrangler deploy` sees.
 */
export async function readWranglerConfig(configPath = join(ROOT, "wrangler.toml")) {
  const { unstable_readConfig } = await import("wrangler");
  const config = unstable_readConfig({ config: configPath });
  const sqliteClasses = new Set((config.migrations ?? []).flatMap((m) => m.new_sqlite_classes ?? []));
  const durableObjects = {};
  for (const b of config.durable_objects?.bindings ?? []) {
    if (b.script_name)
      throw new Error(
        `Durable Object ${b.name} lives in another script (${b.script_name}); the bench does not support that yet`,
      );
    durableObjects[b.name] = { className: b.class_name, useSQLite: sqliteClasses.has(b.class_name) };
  }
  const d1Databases = {};
  const migrationDirs = {};
  for (const d of config.d1_databases ?? []) {
    d1Databases[d.binding] = d.database_id ?? d.database_name;
    migrationDirs[d.binding] = resolve(dirname(configPath), d.migrations_dir ?? "migrations");
  }
  // Queues and R2, in Miniflare's shape (producers by binding, consumers by queue name).
  const queueProducers = Object.fromEntries(
    (config.queues?.producers ?? []).map((p) => [p.binding, p.queue]),
  );
  const queueConsumers = Object.fromEntries(
    (config.queues?.consumers ?? []).map((c) => [
      c.queue,
      {
        maxBatchSize: c.max_batch_size,
        maxBatchTimeout: c.max_batch_timeout,
        maxRetries: c.max_retries,
        deadLetterQueue: c.dead_letter_queue,
      },
    ]),
  );
  const r2Buckets = Object.fromEntries((config.r2_buckets ?? []).map((b) => [b.binding, b.bucket_name]));
  return {
    name: config.name,
    compatibilityDate: config.compatibility_date,
    compatibilityFlags: config.compatibility_flags ?? [],
    // A local run never asks wrangler.toml's public DNS resolver (its receivers are on loopback or
    // routed by name inside Miniflare): outbound host names are judged by their text, as in `npm run dev`.
    vars: { ...(config.vars ?? {}), OUTBOUND_DOH_URL: "off" },
    d1Databases,
    migrationDirs,
    durableObjects,
    queueProducers,
    queueConsumers,
    r2Buckets,
  };
}

/** A fresh 32-byte base64 secret, like the ENCRYPTION_KEY production holds. */
export function randomKey() {
  return randomBytes(32).toString("base64");
}

// ---------------------------------------------------------------------------------------------
// Bundling

/**
 * `wrangler deploy --dry-run --outdir`: exactly the bundle production would receive. `cwd`: the
 * checkout to bundle (another commit's, for BENCH_ONLY=baseline), with this checkout's wrangler.
 */
export function bundleWithWrangler(outdir, { cwd = ROOT } = {}) {
  rmSync(outdir, { recursive: true, force: true });
  const wrangler = join(ROOT, "node_modules", ".bin", "wrangler");
  const started = performance.now();
  // A profiled run (BENCH_XAPI_PROFILE, BENCH_SSO_PROFILE, BENCH_BASELINE_PROFILE) keeps the functions' names.
  const unminified =
    process.env.BENCH_XAPI_PROFILE || process.env.BENCH_SSO_PROFILE || process.env.BENCH_BASELINE_PROFILE
      ? ["--minify=false"]
      : [];
  const result = spawnSync(wrangler, ["deploy", "--dry-run", "--outdir", outdir, ...unminified], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
  });
  if (result.status !== 0) {
    process.stderr.write(result.stdout + result.stderr);
    throw new Error(`wrangler deploy --dry-run failed with status ${result.status}`);
  }
  const scriptPath = join(outdir, "index.js");
  if (!existsSync(scriptPath)) throw new Error(`wrangler wrote no ${scriptPath}`);
  const size = /Total Upload: ([^\n]+)/.exec(result.stdout)?.[1]?.trim() ?? null;
  return { scriptPath, size, ms: performance.now() - started };
}

/** esbuild with the options wrangler uses for Workers (ESM, workerd/worker/browser conditions). */
export async function bundleWithEsbuild(entry, outfile) {
  const { build, stop } = await import("esbuild");
  const started = performance.now();
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"],
    external: ["cloudflare:*", "node:*"],
    logLevel: "warning",
  }).finally(() => stop());
  return { scriptPath: outfile, ms: performance.now() - started };
}

// ---------------------------------------------------------------------------------------------
// Workers

/**
 * The modules that put a bench wrapper (scripts/bench/worker-wrappers.mjs) in front of a bundle: an
 * entry that imports the bundle by its file name, wraps its default export and re-exports its
 * Durable Object classes; then the wrappers. The entry comes first: Miniflare runs the first module.
 */
function wrapperModules(wrapper, scriptPath) {
  const root = dirname(scriptPath);
  return [
    {
      type: "ESModule",
      path: join(root, `bench-${wrapper}-entry.mjs`),
      contents: benchEntrySource(wrapper, `./${basename(scriptPath)}`, "./worker-wrappers.mjs"),
    },
    {
      type: "ESModule",
      path: join(root, "worker-wrappers.mjs"),
      contents: readFileSync(join(BENCH_SCRIPTS, "worker-wrappers.mjs"), "utf8"),
    },
  ];
}

/**
 * Where workers keep D1 and Durable Object storage during a run: BENCH_STORAGE_DIR, else tmpfs
 * (/dev/shm) when there is one, else the OS temp directory. On a VM disk every SQLite commit pays
 * the host's fsync, which says more about the disk than about the code (and production storage is
 * neither), so memory-backed storage is preferred; floors and Lingua always share the same place.
 */
export function storageBase() {
  if (process.env.BENCH_STORAGE_DIR) return ensureDir(resolve(process.env.BENCH_STORAGE_DIR));
  try {
    accessSync("/dev/shm", constants.W_OK);
    return "/dev/shm";
  } catch {
    return os.tmpdir();
  }
}

/** Miniflare options for one module worker; `start` gives it a fresh, empty storage directory. */
export function workerOptions({
  name,
  scriptPath,
  wrapper,
  compatibilityDate,
  compatibilityFlags = [],
  bindings = {},
  d1Databases,
  durableObjects,
  queueProducers,
  queueConsumers,
  r2Buckets,
}) {
  return {
    name,
    // The bundle is handed over as an explicit one-module list. With `modules: true` + `scriptPath`,
    // Miniflare first parses and walks the whole script with acorn in Node to discover its imports
    // (about 300 ms for a 1 MiB bundle), a cost of the local tooling that Cloudflare does not have
    // and that would swamp the start-up comparison. Every worker here is loaded the same way.
    modules: [
      ...(wrapper ? wrapperModules(wrapper, scriptPath) : []),
      { type: "ESModule", path: scriptPath, contents: readFileSync(scriptPath, "utf8") },
    ],
    modulesRoot: dirname(scriptPath),
    compatibilityDate,
    compatibilityFlags,
    bindings,
    ...(d1Databases ? { d1Databases } : {}),
    ...(durableObjects ? { durableObjects } : {}),
    ...(queueProducers ? { queueProducers } : {}),
    ...(queueConsumers ? { queueConsumers } : {}),
    ...(r2Buckets ? { r2Buckets } : {}),
    host: "127.0.0.1",
    port: 0,
  };
}

/**
 * Above concurrency 1 every connection is always waiting, and workerd runs the worker, its Durable
 * Objects and the D1 simulator on one JavaScript thread, so a request's latency is mostly its wait
 * behind the others. Mean latency is then concurrency / throughput (Little's law) and compares the
 * work per request; p50 compares the shapes of two queues. At concurrency 16 the two part widely: in
 * the run of 2026-11-22 18:57 the DO floor's p50 was 0.45–0.49 of its mean, and in one round `me`'s
 * p50 was 1.21× the floor's while its p90 was 0.75× and its mean 1.04× (docs/benchmarks.md). So under
 * load a goal against one floor is decided by mean latency and req/s, and p50 is reported beside them.
 */
const UNDER_LOAD = { by: ["mean", "rps"], reference: ["p50"] };

/**
 * The foundation's goals: each route against its floors (floorOptions). `by`: the metrics that decide the goal. p50 compares median latency (ours / the floor's p50); rps
 * compares throughput (floor req/s / ours, so > 1 means slower than the floor); mean compares mean
 * latency (ours / the sum of the floors' means). A goal against the sum of two floors — one DO round
 * trip plus one D1 round trip — is judged by the mean because means add up and medians do not (the
 * median of a sum is not the sum of the medians, and the floors' latency is skewed: at concurrency
 * 16 their p50 measured 0.6–0.8 of their mean). `reference`: metrics reported beside the verdict,
 * not counted. `underLoad`: the metrics above concurrency 1 where they differ (UNDER_LOAD). Limits
 * are the agreed goals. Shared by run.mjs (the default bench) and webhooks.mjs (the same goals at
 * concurrency 1 while a burst of deliveries drains).
 */
export const API_GOALS = [
  {
    id: "healthz",
    subject: "healthz",
    floors: ["bare"],
    max: 1.2,
    by: ["p50", "rps"],
    underLoad: UNDER_LOAD,
    text: "/healthz ≤ 1.2× floor /bare",
  },
  {
    id: "me",
    subject: "me",
    floors: ["do"],
    max: 1.25,
    by: ["p50", "rps"],
    underLoad: UNDER_LOAD,
    text: "/api/auth/me ≤ 1.25× floor /do",
  },
  {
    id: "tokens",
    subject: "tokens",
    floors: ["do", "d1"],
    max: 1.25,
    by: ["mean"],
    reference: ["p50"],
    text: "token list ≤ 1.25× (floor /do + floor /d1)",
  },
];

/** The metrics that decide a goal at a concurrency level, and those reported beside them. */
export function goalMetrics(goal, connections) {
  const metrics = connections > 1 && goal.underLoad ? goal.underLoad : goal;
  return { by: metrics.by, reference: metrics.reference ?? [] };
}

/** The floor worker (floor-worker.mjs: a bare response, one Durable Object RPC, one D1 point read). */
export function floorOptions(config) {
  return workerOptions({
    name: "floor",
    scriptPath: join(BENCH_SCRIPTS, "floor-worker.mjs"),
    compatibilityDate: config.compatibilityDate,
    compatibilityFlags: config.compatibilityFlags,
    d1Databases: { DB: "bench-floor" },
    durableObjects: { FLOOR_OBJECT: { className: "FloorObject", useSQLite: true } },
  });
}

/**
 * A new Miniflare whose storage lives in a fresh directory; dispose() also deletes that directory.
 * `startedAt` is performance.now() just before `new Miniflare`.
 */
export function createMiniflare(options) {
  const storage = mkdtempSync(join(storageBase(), "lingua-bench-"));
  const startedAt = performance.now();
  const mf = new Miniflare({ ...options, defaultPersistRoot: storage });
  const dispose = async () => {
    try {
      await mf.dispose();
    } finally {
      rmSync(storage, { recursive: true, force: true });
    }
  };
  return { mf, storage, startedAt, dispose };
}

/** Starts a worker and waits for its HTTP address. Returns { mf, url, storage, dispose }. */
export async function startWorker(options) {
  const worker = createMiniflare(options);
  try {
    return { ...worker, url: new URL(await worker.mf.ready) };
  } catch (error) {
    await worker.dispose().catch(() => undefined);
    throw error;
  }
}

/**
 * Lingua's Miniflare options as every scenario runs it: the wrangler config's bindings (every D1
 * database, Durable Object, queue and bucket), a fresh ENCRYPTION_KEY, and loopback targets allowed
 * (the bench's own receivers, LRS, platforms and identity providers).
 */
export function linguaOptions(config, scriptPath) {
  return workerOptions({
    name: "lingua-api",
    scriptPath,
    compatibilityDate: config.compatibilityDate,
    compatibilityFlags: config.compatibilityFlags,
    bindings: { ...config.vars, ENCRYPTION_KEY: randomKey(), ALLOW_LOOPBACK_TARGETS: "true" },
    d1Databases: config.d1Databases,
    durableObjects: config.durableObjects,
    queueProducers: config.queueProducers,
    queueConsumers: config.queueConsumers,
    r2Buckets: config.r2Buckets,
  });
}

/**
 * Options for a profiled worker: workerd's inspector open on `inspectorPort`, and an entry module
 * (`contents`, importing the bundle) put first, which wraps the worker to count or time its D1 work.
 */
export function withProfilingEntry(options, { inspectorPort, scriptPath, name, contents }) {
  return {
    ...options,
    inspectorPort,
    modules: [{ type: "ESModule", path: join(dirname(scriptPath), name), contents }, ...options.modules],
  };
}

/**
 * Lingua's bundle started as the sign-in scenarios run it (scripts/bench/lti.mjs, sso.mjs): the
 * wrangler config's bindings, a fresh ENCRYPTION_KEY, loopback targets allowed (the bench's own
 * platforms and identity providers), and its D1 migrated. `wrap` may change the Miniflare options
 * first (a profiled run's inspector and entry module). Answers { worker, base, d1 }; the caller
 * disposes of the worker.
 */
export async function startMigratedLingua({ config, scriptPath, wrap = (options) => options }) {
  const worker = await startWorker(wrap(linguaOptions(config, scriptPath)));
  try {
    const { d1 } = await migrateEveryDatabase(worker.mf, config);
    return { worker, base: worker.url, d1 };
  } catch (error) {
    await worker.dispose().catch(() => undefined);
    throw error;
  }
}

/**
 * Applies the migrations to every database of the config (DB, DB_1, …: each has the same schema,
 * docs/design/multi-database.md), after its index (scripts/database-index.mjs), as a deployment does. Answers DB's binding, where the benches seed,
 * and what `applyMigrations` answered for it.
 */
export async function migrateEveryDatabase(mf, config) {
  let first;
  for (const [binding, dir] of Object.entries(config.migrationDirs)) {
    const d1 = await mf.getD1Database(binding);
    await d1.batch(databaseIndexStatements(binding).map((statement) => d1.prepare(statement)));
    const applied = await applyMigrations(d1, dir);
    if (binding === "DB") first = { d1, applied };
  }
  return first;
}

/** Applies every `*.sql` file of `dir` in name order, statement by statement (drizzle-kit's breakpoints). */
export async function applyMigrations(d1, dir) {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".sql"))
    .sort();
  let statements = 0;
  for (const file of files) {
    const parts = readFileSync(join(dir, file), "utf8")
      .split("--> statement-breakpoint")
      .map((s) => s.trim())
      .filter(Boolean);
    await d1.batch(parts.map((sql) => d1.prepare(sql)));
    statements += parts.length;
  }
  return { files, statements };
}

// ---------------------------------------------------------------------------------------------
// HTTP

/** fetch + JSON, failing with the response body when the status is not the expected one. */
export async function requestJson(url, { method = "GET", headers = {}, body, expect = 200, signal } = {}) {
  const response = await fetch(url, {
    method,
    signal,
    headers: { ...(body !== undefined ? { "Content-Type": "application/json" } : {}), ...headers },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  if (response.status !== expect) {
    throw new Error(
      `${method} ${url} answered ${response.status}, expected ${expect}: ${text.slice(0, 500)}`,
    );
  }
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

// ---------------------------------------------------------------------------------------------
// Load

/** One run of scripts/bench/load.mjs in a fresh Node process; returns its JSON result. */
export function runLoad({ url, headers = {}, connections, duration, warmup }) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(
      process.execPath,
      [join(BENCH_SCRIPTS, "load.mjs"), JSON.stringify({ url, headers, connections, duration, warmup })],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    let stdout = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (code !== 0) return reject(new Error(`load.mjs exited with ${signal ?? code} for ${url}`));
      const line = stdout.trim().split("\n").pop();
      try {
        resolvePromise(JSON.parse(line));
      } catch {
        reject(new Error(`load.mjs printed no JSON for ${url}: ${stdout.slice(0, 500)}`));
      }
    });
  });
}

/**
 * A long-lived load generator: scripts/bench/load.mjs --serve in its own Node process, fed one run
 * at a time. `run({ url, headers, connections, duration, warmup })` resolves to the same JSON as a
 * one-shot runLoad(); `close()` ends the process. One client process for the whole bench keeps the
 * client warm and identical for every target, so only the workers differ between runs.
 */
export function startLoadGenerator() {
  const child = spawn(process.execPath, [join(BENCH_SCRIPTS, "load.mjs"), "--serve"], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const pending = new Map();
  let nextId = 0;
  let exited = null;
  let buffer = "";
  const failAll = (error) => {
    for (const p of pending.values()) p.reject(error);
    pending.clear();
  };
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk) => {
    buffer += chunk;
    for (let newline = buffer.indexOf("\n"); newline >= 0; newline = buffer.indexOf("\n")) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      if (!line) continue;
      let message;
      try {
        message = JSON.parse(line);
      } catch {
        failAll(new Error(`load generator printed something other than JSON: ${line.slice(0, 300)}`));
        continue;
      }
      const p = pending.get(message.id);
      if (!p) continue;
      pending.delete(message.id);
      if (message.error) p.reject(new Error(`load generator failed for ${p.url}: ${message.error}`));
      else p.resolve(message.result);
    }
  });
  child.on("error", (error) => failAll(error));
  const exitedPromise = new Promise((resolveExit) =>
    child.on("exit", (code, signal) => {
      exited = signal ?? code;
      failAll(new Error(`load generator exited with ${exited}`));
      resolveExit();
    }),
  );
  return {
    run(options) {
      if (exited !== null) return Promise.reject(new Error(`load generator exited with ${exited}`));
      const id = ++nextId;
      const promise = new Promise((resolveRun, reject) =>
        pending.set(id, { resolve: resolveRun, reject, url: options.url }),
      );
      child.stdin.write(`${JSON.stringify({ ...options, id })}\n`);
      return promise;
    },
    async close() {
      if (exited !== null) return;
      child.stdin.end();
      const timer = setTimeout(() => child.kill("SIGTERM"), 5000);
      await exitedPromise;
      clearTimeout(timer);
    },
  };
}

/** True when a load result has anything but 200s (also in its warm-up), errors, timeouts or no 2xx at all. */
export function loadProblem(result) {
  const counts = { ...(result.warmupStatusCounts ?? {}) };
  for (const [status, n] of Object.entries(result.statusCounts)) counts[status] = (counts[status] ?? 0) + n;
  const not200 = Object.entries(counts)
    .filter(([status]) => status !== "200")
    .reduce((sum, [, n]) => sum + n, 0);
  if (not200 + result.non2xx + result.errors + result.timeouts === 0 && result.ok2xx > 0) return null;
  return `statuses ${JSON.stringify(result.statusCounts)}${Object.keys(result.warmupStatusCounts ?? {}).length ? ` (lead-in ${JSON.stringify(result.warmupStatusCounts)})` : ""}, ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`;
}

// ---------------------------------------------------------------------------------------------
// Interleaved rounds
//
// Drift on a small shared machine (frequency, neighbours, GC, caches) is slower than one run, so a
// target measured once lands wholly on whatever the machine was doing at that moment. Measuring
// every target in several short rounds, in a rotating order, spreads the drift over all targets,
// and a goal's ratio can be taken within each round (ours and its floor measured minutes apart at
// most), so what drifts between rounds cancels out of the ratio.

/**
 * The visiting order of each round: every item once, round k starting floor(k·n/rounds) items
 * further along the list (so with 6 items and 3 rounds, rounds start at items 0, 2 and 4). The
 * list order is kept within a round, so neighbours in the list (a route and its floor) stay close.
 */
export function rotatingOrder(items, rounds) {
  const n = items.length;
  return Array.from({ length: rounds }, (_, k) => {
    const start = n ? Math.floor((k * n) / rounds) % n : 0;
    return items.map((_, i) => items[(start + i) % n]);
  });
}

/**
 * Round-robin measurement: `warmup(item)` once per item (in list order), then `rounds` rounds,
 * each calling `measure(item, { round, position })` once per item in rotatingOrder(). Returns a
 * Map item → array of measure() results indexed by round. Plug-in point for any set of targets
 * (routes, datasets) that should be compared against each other.
 */
export async function roundRobin({ items, rounds, warmup, measure }) {
  const results = new Map(items.map((item) => [item, new Array(rounds)]));
  if (warmup) for (const item of items) await warmup(item);
  const orders = rotatingOrder(items, rounds);
  for (let round = 0; round < rounds; round++) {
    for (let position = 0; position < orders[round].length; position++) {
      const item = orders[round][position];
      results.get(item)[round] = await measure(item, { round, position });
    }
  }
  return results;
}

/** { median, min, max, values } of a list of numbers (nulls dropped). */
export function spread(values) {
  const list = values.filter((v) => v !== null && v !== undefined && Number.isFinite(v));
  if (!list.length) return { median: null, min: null, max: null, values };
  return { median: median(list), min: Math.min(...list), max: Math.max(...list), values };
}

/**
 * A ratio taken per round and across rounds. `perRound(round)` → the ratio from that round's own
 * numbers (or null when a number is missing); `ofMedians` is computed by the caller from medians.
 * Returns { perRound: [...], median } where `median` is the median of the per-round ratios.
 */
export function ratioAcrossRounds(rounds, perRound) {
  const values = Array.from({ length: rounds }, (_, round) => perRound(round));
  const list = values.filter((v) => v !== null && Number.isFinite(v));
  return { perRound: values, median: list.length ? median(list) : null };
}

// ---------------------------------------------------------------------------------------------
// Numbers and the machine

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function systemInfo() {
  const cpuinfo = existsSync("/proc/cpuinfo") ? readFileSync("/proc/cpuinfo", "utf8") : "";
  const nproc = spawnSync("nproc", { encoding: "utf8" });
  return {
    date: new Date().toISOString(),
    node: spawnSync(process.execPath, ["--version"], { encoding: "utf8" }).stdout.trim(),
    nproc: nproc.status === 0 ? Number(nproc.stdout.trim()) : os.availableParallelism(),
    cpuModel: /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? os.cpus()[0]?.model ?? "unknown",
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    totalMemMiB: Math.round(os.totalmem() / 1024 / 1024),
    loadAvg: os.loadavg(),
  };
}

/**
 * Share of the machine's CPU time used by other processes over `ms`, from /proc/stat minus this
 * process's own ticks (null where there is no /proc). Other work on the machine skews every
 * figure, so this is sampled and reported with the results.
 */
export async function cpuBusyShare(ms = 1000) {
  if (!existsSync("/proc/stat") || !existsSync("/proc/self/stat")) return null;
  const read = () => {
    const fields = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
    const own = readFileSync("/proc/self/stat", "utf8")
      .replace(/^.*\) /, "")
      .split(" ");
    // After the command name: state is field 3, utime 14 and stime 15 (1-based, man proc).
    return {
      idle: fields[3] + (fields[4] ?? 0),
      total: fields.reduce((a, b) => a + b, 0),
      own: Number(own[11]) + Number(own[12]),
    };
  };
  const before = read();
  await new Promise((r) => setTimeout(r, ms));
  const after = read();
  const total = after.total - before.total;
  if (total <= 0) return null;
  const busy = total - (after.idle - before.idle) - (after.own - before.own);
  return Math.max(0, busy / total);
}

/** One process's /proc/<pid>/stat: its command name, parent and CPU ticks (user + system, 1/100 s). */
export function procStat(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // After the command name: ppid is field 4, utime 14 and stime 15 (1-based, man proc).
  const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return {
    comm: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")),
    ppid: Number(rest[1]),
    ticks: Number(rest[11]) + Number(rest[12]),
  };
}

/** Every live process's procStat(), by pid (those that end while being read are left out). */
export function allProcStats() {
  const procs = new Map();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      procs.set(Number(entry), procStat(entry));
    } catch {
      // gone meanwhile
    }
  }
  return procs;
}

/**
 * A snapshot for otherCpuShare(): the machine's CPU ticks (/proc/stat) and those of this process and
 * every live descendant (workerd, the load generator). null where there is no /proc.
 */
export function cpuSnapshot() {
  if (!existsSync("/proc/stat")) return null;
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  const procs = allProcStats();
  const tree = new Map([[process.pid, procs.get(process.pid)?.ticks ?? 0]]);
  for (let grown = true; grown; ) {
    grown = false;
    for (const [pid, p] of procs) {
      if (!tree.has(pid) && tree.has(p.ppid)) {
        tree.set(pid, p.ticks);
        grown = true;
      }
    }
  }
  return { idle: fields[3] + (fields[4] ?? 0), total: fields.reduce((a, b) => a + b, 0), tree };
}

/**
 * Share of the machine's CPU time between two cpuSnapshot()s used by anything outside this
 * process tree (other processes, and kernel time no process is charged for). Taken around every
 * load run, so a round disturbed by other work on the machine shows up in the report.
 */
export function otherCpuShare(before, after) {
  if (!before || !after) return null;
  const total = after.total - before.total;
  if (total <= 0) return null;
  let own = 0;
  for (const [pid, ticks] of after.tree) own += ticks - (before.tree.get(pid) ?? 0);
  const busy = total - (after.idle - before.idle);
  return Math.min(1, Math.max(0, (busy - own) / total));
}

export function ensureDir(dir) {
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Widths from the content; numbers right-aligned. */
export function formatTable(header, rows) {
  const cells = [header, ...rows].map((r) => r.map((c) => String(c)));
  const widths = header.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  const line = (r) =>
    r
      .map((c, i) => (i === 0 || /^[A-Za-z]/.test(c) ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join("  ")
      .trimEnd();
  return [line(cells[0]), widths.map((w) => "-".repeat(w)).join("  "), ...cells.slice(1).map(line)].join(
    "\n",
  );
}

// ---------------------------------------------------------------------------------------------
// Sign-in scenarios (lti.mjs, sso.mjs): a prepared list of requests sent by one client, and the
// password sign-in they are compared with.

export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/**
 * `requests` (functions returning a Response promise) at `concurrency`: req/s and latency
 * percentiles. With `keep`, each answer's status, headers and body text, in the requests' order, and
 * every latency (to combine batches).
 */
export async function measureRequests(requests, concurrency, { keep = false } = {}) {
  const latencies = [];
  const statuses = {};
  const answers = keep ? new Array(requests.length) : null;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests.length) {
        const index = next++;
        const t0 = performance.now();
        const response = await requests[index]();
        const body = await response.text();
        latencies.push(performance.now() - t0);
        statuses[response.status] = (statuses[response.status] ?? 0) + 1;
        if (answers) answers[index] = { status: response.status, headers: response.headers, body };
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return {
    requests: requests.length,
    statuses,
    seconds,
    rps: requests.length / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    meanMs: latencies.reduce((a, b) => a + b, 0) / latencies.length,
    ...(answers ? { answers, latencies } : {}),
  };
}

let ipCounter = 0;
/** A client IP no earlier request used: every request its own, so no per-IP limit is reached. */
export const freshIp = () => `10.${(ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter++ & 255}`;

/**
 * A learner with a password, written into D1, and `count` ready requests of `POST /api/auth/sign-in`
 * with it (a PBKDF2 verification and a session token each): the yardstick of the sign-in scenarios.
 */
export async function passwordSignIn({ d1, baseUrl, institutionId, email, password }) {
  const { hashPassword } = await import("../demo-data.mjs");
  await d1
    .prepare(
      "INSERT INTO users (id, email, name, role, institution_id, password_hash) VALUES (?, ?, 'Sign-in', 'learner', ?, ?)",
    )
    .bind(`usr_${randomBytes(6).toString("hex")}`, email, institutionId, hashPassword(password))
    .run();
  return (count) =>
    Array.from(
      { length: count },
      () => () =>
        fetch(new URL("/api/auth/sign-in", baseUrl), {
          method: "POST",
          headers: { "Content-Type": "application/json", "CF-Connecting-IP": freshIp() },
          body: JSON.stringify({ email, password }),
        }),
    );
}
