// The exports scenario of `npm run bench` (BENCH_ONLY=exports): a 1,000,000-row `activity` export end to
// end through the Miniflare API — POST, the queue consumer writing 5 MiB parts into local R2, until the
// job is `completed`, then the download — against a floor: a plain D1 → R2 copy of the same rows
// (scripts/bench/export-floor-worker.mjs). Both run in one Miniflare (one workerd process) on a copy of
// the large learning-activity dataset (scripts/bench/datasets.mjs), whose attempts are moved into one
// institution on the copy: exactly 1,000,000 of them, the rest into another one.
//
// Memory: the peak resident set of the workerd process during each run (VmHWM from /proc, reset at the
// start of the run through /proc/<pid>/clear_refs; sampled VmRSS where that is not allowed), next to its
// resident set just before. That process also holds the local D1 and R2 simulators, so the figure is an
// upper bound of the worker's own memory; the floor's run shows what they cost, and an export of a tenth
// of the rows shows whether the worker's share grows with the row count. The V8 heap of the isolate
// cannot be read from outside while it works (the inspector is not served during a long queue event).
//
// The time of an export runs from the POST to the instant the consumer marks the job `completed`
// (its `heartbeat_at`, in ms). Only the exports queues are consumed here, nothing talks to workerd while
// an export runs (its row is read in D1 after a quiet period), and the files are downloaded after the
// last export. In this Miniflare, a long queue event was now and
// then never reported back to its queue (which then delivered nothing more) when other queue deliveries
// to the same worker ran meanwhile — those of the events the exports publish, retried at once because
// their queue has no consumer on this branch — and once after requests and downloads made during and
// between exports. We take it for a behaviour of the local simulator and work around it here.
//
//   BENCH_EXPORT_ROUNDS=3       rounds; each runs the floor copy and the full export once
//   BENCH_EXPORT_PAGE_SIZE=N    rows per D1 page for the export and the floor (default: EXPORT_PAGE_SIZE of wrangler.toml)
//   BENCH_EXPORT_SIMULATE_STALL=1  the first measured floor copy is given up after 1 s, as a stall
//                               would be (to exercise the new session that follows one)
//   BENCH_V8_FLAGS=…            V8 flags for workerd (scripts/bench/v8-flags.mjs); with --trace-gc the
//                               report adds the worker isolate's own heap per export (see GcTrace)
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { DEMO_PASSWORD } from "../demo-data.mjs";
import { datasetSpecs, ensureDataset, linguaWorker } from "./datasets.mjs";
import {
  allProcStats,
  BENCH_SCRIPTS,
  cpuSnapshot,
  median,
  otherCpuShare,
  procStat,
  requestJson,
  storageBase,
} from "./lib.mjs";
import { BENCH_V8_FLAGS } from "./v8-flags.mjs";

const INSTITUTION = "ins_demo_initech";
const ADMIN = "owner@initech.lingua.test";
const ROWS = 1_000_000;
const SMALL_ROWS = 100_000;
const GOAL_ROWS_PER_SECOND = 150_000;
/** How long to leave workerd alone after requesting an export of all rows / of a tenth of them. */
const QUIET_FULL_MS = 15_000;
const QUIET_SMALL_MS = 3_000;
/** A floor copy takes 6–12 s here, an export 6–9 s: one not finished in a minute or two has stalled. */
const FLOOR_TIMEOUT_MS = 60_000;
const EXPORT_TIMEOUT_MS = 120_000;
/** Sessions (workerd processes) at most: the first one and four after stalls (on 2026-11-22, without --single-threaded-gc, a session's third floor copy stalled in 3 of the 9 sessions that made one). */
const MAX_SESSIONS = 5;

class Stalled extends Error {
  constructor(message, workerdCpuSeconds, cause) {
    super(message, { cause });
    this.workerdCpuSeconds = workerdCpuSeconds;
  }
}

// ---------------------------------------------------------------------------------------------
// workerd's memory, from /proc

function descendants(root) {
  const parents = allProcStats();
  const found = [];
  const walk = (pid) => {
    for (const [child, p] of parents) {
      if (p.ppid === pid) {
        found.push({ pid: child, comm: p.comm });
        walk(child);
      }
    }
  };
  walk(root);
  return found;
}

function workerdPid() {
  const list = descendants(process.pid).filter((p) => p.comm.startsWith("workerd"));
  if (list.length !== 1) throw new Error(`expected one workerd process, found ${JSON.stringify(list)}`);
  return list[0].pid;
}

function statusKiB(pid, field) {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) : null;
}

/** CPU seconds (user + system, all threads) the process has used so far. */
function cpuSeconds(pid) {
  return procStat(pid).ticks / 100;
}

/** Peak RSS of `pid` over a run: the kernel's high-water mark when it can be reset, and 10 ms samples. */
function memoryProbe(pid) {
  let resettable = true;
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
  } catch {
    resettable = false;
  }
  const before = statusKiB(pid, "VmRSS");
  let sampled = before;
  const timer = setInterval(() => {
    const rss = statusKiB(pid, "VmRSS");
    if (rss !== null && rss > sampled) sampled = rss;
  }, 10);
  return {
    stop() {
      clearInterval(timer);
      const hwm = resettable ? statusKiB(pid, "VmHWM") : null;
      const peak = Math.max(sampled, hwm ?? 0);
      return {
        beforeMiB: before / 1024,
        peakMiB: peak / 1024,
        growthMiB: (peak - before) / 1024,
        source: resettable ? "VmHWM (reset) and 10 ms samples" : "10 ms samples of VmRSS",
      };
    },
  };
}

// ---------------------------------------------------------------------------------------------

function workers(config, scriptPath, pageSize) {
  const lingua = linguaWorker(config, scriptPath, { vars: { EXPORT_PAGE_SIZE: String(pageSize) } });
  // Every queue can be sent to; only the exports queues are consumed here. The events that exports
  // publish are left in their queue: delivering them (and their retries) would only add noise.
  const consumers = Object.fromEntries(
    Object.entries(config.queueConsumers).filter(([queue]) => queue.startsWith("lingua-exports")),
  );
  Object.assign(lingua, {
    queueProducers: config.queueProducers,
    queueConsumers: consumers,
    r2Buckets: config.r2Buckets,
  });
  const floorPath = join(BENCH_SCRIPTS, "export-floor-worker.mjs");
  const floor = {
    name: "export-floor",
    modules: [{ type: "ESModule", path: floorPath, contents: readFileSync(floorPath, "utf8") }],
    compatibilityDate: config.compatibilityDate,
    compatibilityFlags: config.compatibilityFlags,
    d1Databases: config.d1Databases,
    r2Buckets: { BUCKET: "export-floor" },
    unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
  };
  return [lingua, floor];
}

/**
 * Waits for the job to finish and returns when it did (ms since the epoch): the `heartbeat_at` the
 * consumer writes with the `completed` status. The job's row is read in D1 directly, first after
 * `quietMs` and then every second, so that nothing else talks to workerd while the export runs (see
 * the top of this file); a dropped connection is simply asked again.
 */
async function waitUntilDone(d1, id, quietMs, log, timeoutMs = 300_000) {
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, quietMs));
  for (;;) {
    if (performance.now() - started > timeoutMs)
      throw new Error(`export ${id} not done after ${timeoutMs / 1000} s`);
    let job;
    try {
      // A stalled workerd never answers: each read gives up after 10 s.
      let timer;
      job = await Promise.race([
        d1.prepare("SELECT status, progress, heartbeat_at FROM export_jobs WHERE id = ?").bind(id).first(),
        new Promise(
          (_, reject) => (timer = setTimeout(() => reject(new Error("no answer from D1 in 10 s")), 10_000)),
        ),
      ]).finally(() => clearTimeout(timer));
    } catch (error) {
      log(`bench: exports: … reading export ${id}: ${error.message}`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      continue;
    }
    if (job.status === "completed" || job.status === "failed") return job.heartbeat_at;
    log(`bench: exports: … ${id} ${job.status}, ${job.progress.toLocaleString("en-US")} rows so far`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** Streams the download, counting bytes and line ends; returns seconds and MB/s. */
async function download(url, headers) {
  let started = performance.now();
  let response;
  for (let attempt = 1; ; attempt++) {
    try {
      response = await fetch(url, { headers });
      break;
    } catch (error) {
      // A kept-alive connection that workerd closed meanwhile: once more on a new one.
      if (attempt >= 3 || error?.cause?.code !== "UND_ERR_SOCKET") throw error;
      started = performance.now();
    }
  }
  if (response.status !== 200)
    throw new Error(`download answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
  let bytes = 0;
  let lines = 0;
  for await (const chunk of response.body) {
    bytes += chunk.length;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines += 1;
  }
  const seconds = (performance.now() - started) / 1000;
  return {
    bytes,
    lines,
    seconds,
    mbPerSecond: bytes / 1e6 / seconds,
    contentLength: Number(response.headers.get("Content-Length")),
  };
}

/**
 * The worker isolate's own V8 heap, from workerd's `--trace-gc` lines (BENCH_V8_FLAGS=--trace-gc):
 * each line names its isolate and gives the heap's used and committed MB before and after that
 * collection, at an isolate clock in ms. Lines reach us late (workerd's stdout is block-buffered),
 * so each isolate's clock is mapped to wall time by the smallest (arrival − clock) of its lines,
 * and a run's collections are those mapped into its window. The Lingua worker's isolate is the one
 * that collects most while only it works: GET /api/openapi.json, 200 times, after the warm-up. The
 * heap excludes ArrayBuffer contents (the part buffers, a page's bytes): V8 keeps those outside it.
 */
class GcTrace {
  lines = [];
  attach(stdout, stderr) {
    stderr.pipe(process.stderr);
    let rest = "";
    stdout.on("data", (chunk) => {
      const now = Date.now();
      const text = rest + chunk.toString("utf8");
      const parts = text.split("\n");
      rest = parts.pop();
      for (const line of parts) {
        const m =
          /^\[\d+:(0x[0-9a-f]+)\]\s+(\d+) ms: (Scavenge|Mark-Compact|Minor Mark-Sweep|Mark-Compact \(reduce\))[^(]*?([\d.]+) \(([\d.]+)\) -> ([\d.]+) \(([\d.]+)\) MB/.exec(
            line,
          );
        if (m)
          this.lines.push({
            isolate: m[1],
            ms: Number(m[2]),
            kind: m[3],
            usedBefore: Number(m[4]),
            committedBefore: Number(m[5]),
            usedAfter: Number(m[6]),
            committedAfter: Number(m[7]),
            arrived: now,
          });
        else process.stdout.write(`${line}\n`);
      }
    });
  }
  /** Wall-clock ms of each line: per isolate, its clock plus the smallest (arrival − clock). */
  mapped() {
    const offsets = new Map();
    for (const l of this.lines)
      offsets.set(l.isolate, Math.min(offsets.get(l.isolate) ?? Infinity, l.arrived - l.ms));
    return this.lines.map((l) => ({ ...l, at: l.ms + offsets.get(l.isolate) }));
  }
  isolateMostActive(from, to) {
    const counts = new Map();
    for (const l of this.mapped())
      if (l.at >= from && l.at <= to) counts.set(l.isolate, (counts.get(l.isolate) ?? 0) + 1);
    return [...counts].sort((a, b) => b[1] - a[1])[0] ?? null;
  }
  /** The isolate's collections in [from, to] (wall ms, widened by `slack`): count, peak used and committed MB. */
  window(isolate, from, to, slack = 1000) {
    const own = this.mapped().filter(
      (l) => l.isolate === isolate && l.at >= from - slack && l.at <= to + slack,
    );
    if (own.length === 0)
      return { collections: 0, full: 0, peakUsedMB: null, peakAfterMB: null, peakCommittedMB: null };
    return {
      collections: own.length,
      full: own.filter((l) => l.kind.startsWith("Mark-Compact")).length,
      // Used just before a collection: the peak, including garbage the young generation had not yet
      // dropped (V8 sizes it as it goes). Used just after: what survived, the live heap's upper bound.
      peakUsedMB: Math.max(...own.map((l) => l.usedBefore)),
      peakAfterMB: Math.max(...own.map((l) => l.usedAfter)),
      peakCommittedMB: Math.max(...own.map((l) => Math.max(l.committedBefore, l.committedAfter))),
    };
  }
}

export async function runExports({
  config,
  scriptPath,
  log = (m) => console.error(`${new Date().toISOString().slice(11, 19)} ${m}`),
}) {
  const rounds = Number(process.env.BENCH_EXPORT_ROUNDS ?? 3);
  const dataset = await ensureDataset(datasetSpecs().large, { config, scriptPath, log });
  if (dataset.meta.recorded < ROWS)
    throw new Error(`the large dataset has ${dataset.meta.recorded} attempts, fewer than ${ROWS}`);

  const pageSize = Number(process.env.BENCH_EXPORT_PAGE_SIZE || config.vars.EXPORT_PAGE_SIZE);

  // One session: a copy of the dataset, one Miniflare (one workerd), the rows moved, a signed-in
  // admin, a warm-up. A stalled run (see FLOOR_TIMEOUT_MS) leaves workerd spinning for good, so its
  // session is thrown away and a new one opened to measure the run again.
  let mf = null;
  let storage = null;
  let base, floorUrl, d1, auth, pid, moveSeconds, tenth, smallCount, gcTrace, marker;
  let measuring = false;
  let session = 0;
  const stalls = [];
  const closeSession = async () => {
    if (mf) await mf.dispose().catch(() => undefined);
    if (storage && existsSync(storage)) rmSync(storage, { recursive: true, force: true });
    mf = null;
    storage = null;
  };
  try {
    const openSession = async () => {
      session += 1;
      storage = mkdtempSync(join(storageBase(), "lingua-bench-exports-"));
      cpSync(dataset.dir, storage, { recursive: true });
      gcTrace = BENCH_V8_FLAGS.includes("--trace-gc") ? new GcTrace() : null;
      mf = new Miniflare({
        workers: workers(config, scriptPath, pageSize),
        host: "127.0.0.1",
        port: 0,
        defaultPersistRoot: storage,
        ...(gcTrace ? { handleRuntimeStdio: (stdout, stderr) => gcTrace.attach(stdout, stderr) } : {}),
      });
      base = new URL(await mf.ready);
      floorUrl = await mf.unsafeGetDirectURL("export-floor");
      d1 = await mf.getD1Database("DB");

      // Exactly ROWS attempts in the bench institution (the earliest, in export order), the rest elsewhere.
      log(
        `bench: exports: session ${session}: moving ${ROWS.toLocaleString("en-US")} attempts into ${INSTITUTION}…`,
      );
      const moveStarted = performance.now();
      await d1
        .prepare(
          "UPDATE attempts SET institution_id = CASE WHEN id IN (SELECT id FROM attempts ORDER BY occurred_at, id LIMIT ?2) THEN ?1 ELSE 'ins_demo_acme' END",
        )
        .bind(INSTITUTION, ROWS)
        .run();
      const count = (
        await d1
          .prepare("SELECT count(*) AS n FROM attempts WHERE institution_id = ?")
          .bind(INSTITUTION)
          .first()
      ).n;
      if (count !== ROWS) throw new Error(`${count} attempts in ${INSTITUTION}, expected ${ROWS}`);
      await d1
        .prepare("UPDATE institutions SET rate_limit_per_minute = 1000000000 WHERE id = ?")
        .bind(INSTITUTION)
        .run();
      moveSeconds = (performance.now() - moveStarted) / 1000;
      // `from` of the last SMALL_ROWS rows: an export of a tenth of the rows, for the memory comparison.
      tenth = await d1
        .prepare(
          "SELECT occurred_at FROM attempts WHERE institution_id = ? ORDER BY occurred_at, id LIMIT 1 OFFSET ?",
        )
        .bind(INSTITUTION, ROWS - SMALL_ROWS)
        .first();
      smallCount = (
        await d1
          .prepare("SELECT count(*) AS n FROM attempts WHERE institution_id = ? AND occurred_at >= ?")
          .bind(INSTITUTION, tenth.occurred_at)
          .first()
      ).n;

      const signIn = await requestJson(new URL("/api/auth/sign-in", base), {
        method: "POST",
        body: { email: ADMIN, password: DEMO_PASSWORD },
      });
      auth = { Authorization: `Bearer ${signIn.body.token}` };
      pid = workerdPid();

      // Warm-up, unmeasured: a full export and a full copy, so that the measured runs find the local
      // D1 and R2 simulators and the isolate's heap at their working size (a first pass over the table
      // grows workerd by a few hundred MiB, whoever makes it).
      log(`bench: exports: session ${session}: warm-up (one full export, one floor copy)…`);
      measuring = false;
      await exportRun("warm-up", { type: "activity" }, ROWS, QUIET_FULL_MS);
      await floorRun();
      measuring = true;
      if (gcTrace) {
        // Only the Lingua worker works now: its isolate is the one that collects (see GcTrace).
        await new Promise((resolve) => setTimeout(resolve, 2000));
        marker = { from: Date.now() };
        for (let i = 0; i < 200; i++) await (await fetch(new URL("/api/openapi.json", base))).arrayBuffer();
        marker.to = Date.now();
        await new Promise((resolve) => setTimeout(resolve, 2000));
      }
    };

    const exportRun = async (label, body, expectedRows, quietMs) => {
      const cpu = cpuSnapshot();
      const cpuBefore = cpuSeconds(pid);
      const memory = memoryProbe(pid);
      const started = Date.now();
      const created = await requestJson(new URL("/api/integrations/exports", base), {
        method: "POST",
        headers: auth,
        body,
        expect: 202,
      });
      let finished;
      try {
        finished = await waitUntilDone(d1, created.body.id, quietMs, log, EXPORT_TIMEOUT_MS);
      } catch (error) {
        memory.stop();
        throw new Stalled(
          `export ${created.body.id} not completed in ${EXPORT_TIMEOUT_MS / 1000} s`,
          cpuSeconds(pid) - cpuBefore,
          error,
        );
      }
      const seconds = (finished - started) / 1000;
      const window = { from: started, to: finished };
      // workerd's CPU time from the POST until the job was seen done (it idles once the job is completed).
      const workerdCpu = cpuSeconds(pid) - cpuBefore;
      const { body: job } = await requestJson(new URL(`/api/integrations/exports/${created.body.id}`, base), {
        headers: auth,
      });
      const mem = memory.stop();
      if (job.status !== "completed")
        throw new Error(`${label}: export ${job.id} ${job.status}: ${job.error}`);
      if (job.row_count !== expectedRows)
        throw new Error(`${label}: ${job.row_count} rows, expected ${expectedRows}`);
      const row = await d1
        .prepare(
          "SELECT generation, attempts, json_array_length(parts) AS parts FROM export_jobs WHERE id = ?",
        )
        .bind(job.id)
        .first();
      return {
        label,
        session,
        id: job.id,
        rows: job.row_count,
        bytes: job.byte_size,
        seconds,
        rowsPerSecond: job.row_count / seconds,
        messages: row.generation + 1,
        invocations: row.attempts,
        parts: row.parts,
        memory: mem,
        workerdCpuSeconds: workerdCpu,
        window,
        otherCpuShare: otherCpuShare(cpu, cpuSnapshot()),
      };
    };
    // Downloads come after every export: in this Miniflare, a queue delivery that follows a large
    // streamed download is sometimes never reported back to the queue (the handler has returned), which
    // would stall the next export. Each file is checked: size, Content-Length, one line per row.
    const downloadRun = async (run) => {
      const dl = await download(new URL(`/api/integrations/exports/${run.id}/download`, base), auth);
      if (dl.bytes !== run.bytes || dl.contentLength !== run.bytes || dl.lines !== run.rows + 1) {
        throw new Error(
          `${run.label}: downloaded ${dl.bytes} bytes / ${dl.lines} lines, expected ${run.bytes} / ${run.rows + 1}`,
        );
      }
      run.download = dl;
    };
    // Now and then a floor copy never answers: workerd's one thread spins (~93 % CPU) in V8's
    // platform message loop — cppgc sweep tasks posting themselves again, a perf profile shows —
    // and serves nothing any more. After FLOOR_TIMEOUT_MS the session is given up (see above).
    const floorRun = async () => {
      const cpu = cpuSnapshot();
      const cpuBefore = cpuSeconds(pid);
      const memory = memoryProbe(pid);
      const started = performance.now();
      const url = new URL("/copy", floorUrl);
      url.searchParams.set("institution", INSTITUTION);
      url.searchParams.set("as_of", new Date().toISOString());
      url.searchParams.set("page", String(pageSize));
      let result;
      try {
        const simulate = process.env.BENCH_EXPORT_SIMULATE_STALL === "1" && stalls.length === 0 && measuring;
        result = await requestJson(url, { signal: AbortSignal.timeout(simulate ? 1000 : FLOOR_TIMEOUT_MS) });
      } catch (error) {
        memory.stop();
        if (error?.name !== "TimeoutError") throw error;
        throw new Stalled(
          `floor copy not answered in ${FLOOR_TIMEOUT_MS / 1000} s`,
          cpuSeconds(pid) - cpuBefore,
          error,
        );
      }
      const seconds = (performance.now() - started) / 1000;
      const workerdCpu = cpuSeconds(pid) - cpuBefore;
      const mem = memory.stop();
      if (result.body.rows !== ROWS) throw new Error(`floor copied ${result.body.rows} rows`);
      return {
        label: "floor: plain D1 → R2 copy",
        session,
        rows: result.body.rows,
        bytes: result.body.bytes,
        parts: result.body.parts,
        seconds,
        rowsPerSecond: ROWS / seconds,
        memory: mem,
        workerdCpuSeconds: workerdCpu,
        otherCpuShare: otherCpuShare(cpu, cpuSnapshot()),
      };
    };

    // A stalled run throws Stalled: the session is closed, a new one opened and the run measured
    // again, at most MAX_SESSIONS sessions in all.
    const measured = async (what) => {
      for (;;) {
        try {
          if (!mf) await openSession();
          return await what();
        } catch (error) {
          if (!(error instanceof Stalled) || session >= MAX_SESSIONS) throw error;
          stalls.push({
            at: new Date().toISOString(),
            session,
            what: error.message,
            workerdCpuSeconds: error.workerdCpuSeconds,
          });
          log(
            `bench: exports: STALLED in session ${session}: ${error.message} (workerd used ${error.workerdCpuSeconds.toFixed(1)} CPU s meanwhile); a new session measures it again`,
          );
          await closeSession();
        }
      }
    };

    const runs = [];
    for (let round = 0; round < rounds; round++) {
      log(`bench: exports: round ${round + 1}/${rounds}: floor copy…`);
      runs.push({ round, kind: "floor", ...(await measured(floorRun)) });
      log(`bench: exports: … ${JSON.stringify(runs.at(-1))}`);
      log(
        `bench: exports: round ${round + 1}/${rounds}: activity export of ${ROWS.toLocaleString("en-US")} rows…`,
      );
      runs.push({
        round,
        kind: "export",
        ...(await measured(() =>
          exportRun(
            `activity, ${ROWS.toLocaleString("en-US")} rows`,
            { type: "activity" },
            ROWS,
            QUIET_FULL_MS,
          ),
        )),
      });
      log(`bench: exports: … ${JSON.stringify(runs.at(-1))}`);
    }
    log(
      `bench: exports: activity export of the last ${smallCount.toLocaleString("en-US")} rows (memory comparison)…`,
    );
    const small = {
      kind: "export-small",
      ...(await measured(() =>
        exportRun(
          `activity, ${smallCount.toLocaleString("en-US")} rows`,
          { type: "activity", from: tenth.occurred_at },
          smallCount,
          QUIET_SMALL_MS,
        ),
      )),
    };

    // Files of an abandoned session went with its workerd: only the last session's are downloaded.
    log("bench: exports: downloads…");
    for (const run of [...runs.filter((r) => r.kind === "export"), small])
      if (run.session === session) await downloadRun(run);

    if (gcTrace && marker) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const found = gcTrace.isolateMostActive(marker.from, marker.to + 500);
      if (found) {
        for (const run of [...runs.filter((r) => r.kind === "export"), small]) {
          if (run.session === session)
            run.isolateHeap = {
              isolate: found[0],
              markerCollections: found[1],
              ...gcTrace.window(found[0], run.window.from, run.window.to),
            };
        }
      }
    }
    const exportsOnly = runs.filter((r) => r.kind === "export");
    const floors = runs.filter((r) => r.kind === "floor");
    const summary = {
      exportSeconds: median(exportsOnly.map((r) => r.seconds)),
      exportRowsPerSecond: median(exportsOnly.map((r) => r.rowsPerSecond)),
      floorRowsPerSecond: median(floors.map((r) => r.rowsPerSecond)),
      downloadMBps: median(exportsOnly.filter((r) => r.download).map((r) => r.download.mbPerSecond)),
      exportPeakMiB: Math.max(...exportsOnly.map((r) => r.memory.peakMiB)),
      exportGrowthMiB: Math.max(...exportsOnly.map((r) => r.memory.growthMiB)),
      smallGrowthMiB: small.memory.growthMiB,
      floorGrowthMiB: Math.max(...floors.map((r) => r.memory.growthMiB)),
      partMiB: 5,
      goalRowsPerSecond: GOAL_ROWS_PER_SECOND,
      // Export rows/s over floor rows/s of the same round (the floor runs right before), median of rounds.
      ratioToFloor: median(
        exportsOnly.map((r) => r.rowsPerSecond / floors.find((f) => f.round === r.round).rowsPerSecond),
      ),
      // The same per CPU second of workerd (one thread does nearly all of its work): less sensitive
      // to other work on the machine than rows per wall-clock second.
      exportRowsPerCpuSecond: median(exportsOnly.map((r) => r.rows / r.workerdCpuSeconds)),
      floorRowsPerCpuSecond: median(floors.map((r) => r.rows / r.workerdCpuSeconds)),
      cpuRatioToFloor: median(
        exportsOnly.map(
          (r) =>
            r.rows / r.workerdCpuSeconds / (ROWS / floors.find((f) => f.round === r.round).workerdCpuSeconds),
        ),
      ),
      stalls,
      sessions: session,
    };
    summary.verdict = summary.exportRowsPerSecond >= GOAL_ROWS_PER_SECOND ? "PASS" : "MISS";
    return {
      dataset: { dir: dataset.dir, cached: dataset.cached, meta: dataset.meta },
      pageSize,
      v8Flags: BENCH_V8_FLAGS,
      moveSeconds,
      runs,
      small,
      summary,
    };
  } finally {
    await closeSession();
  }
}

export function exportsReport(result, formatTable) {
  const out = [];
  const n = (v, digits = 0) =>
    v.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
  out.push(
    "",
    `Exports: ${ROWS.toLocaleString("en-US")}-row activity export end to end (POST → queue → R2 parts → completed), then its download; floor: a plain D1 → R2 copy of the same rows; pages of ${result.pageSize.toLocaleString("en-US")} rows, 5 MiB parts`,
  );
  out.push(
    formatTable(
      [
        "run",
        "rows",
        "MB",
        "seconds",
        "rows/s",
        "workerd CPU s",
        "rows/CPU s",
        "messages",
        "parts",
        "workerd RSS before MiB",
        "peak MiB",
        "growth MiB",
        "download MB/s",
        "other CPU",
      ],
      [...result.runs, result.small].map((r) => [
        `${r.label}${r.round === undefined ? "" : ` (round ${r.round + 1})`}`,
        n(r.rows),
        n(r.bytes / 1e6, 1),
        n(r.seconds, 2),
        n(r.rowsPerSecond),
        n(r.workerdCpuSeconds, 2),
        n(r.rows / r.workerdCpuSeconds),
        r.messages ?? "-",
        r.parts,
        n(r.memory.beforeMiB, 1),
        n(r.memory.peakMiB, 1),
        n(r.memory.growthMiB, 1),
        r.download ? n(r.download.mbPerSecond, 1) : "-",
        r.otherCpuShare === null ? "-" : `${Math.round(r.otherCpuShare * 100)}%`,
      ]),
    ),
  );
  const s = result.summary;
  out.push(
    `Medians: export ${n(s.exportSeconds, 2)} s, ${n(s.exportRowsPerSecond)} rows/s (goal ≥ ${n(s.goalRowsPerSecond)}: ${s.verdict}); floor ${n(s.floorRowsPerSecond)} rows/s; export / floor in the same round ${n(s.ratioToFloor, 2)}×; download ${n(s.downloadMBps, 1)} MB/s.`,
    `Per CPU second of workerd: export ${n(s.exportRowsPerCpuSecond)} rows, floor ${n(s.floorRowsPerCpuSecond)}, export / floor ${n(s.cpuRatioToFloor, 2)}×.`,
    s.stalls.length
      ? `Stalls (workerd spinning; its session abandoned and the run measured again in a new one): ${s.stalls.map((x) => `${x.at.slice(11, 19)} UTC, session ${x.session}: ${x.what}, workerd ${x.workerdCpuSeconds.toFixed(1)} CPU s meanwhile`).join("; ")}. Downloaded: the last session's files only.`
      : "No stalls (one session).",
    `workerd's V8 flags: ${result.v8Flags?.length ? result.v8Flags.join(" ") : "none (BENCH_V8_FLAGS unset)"}.`,
    ...[...result.runs.filter((r) => r.kind === "export"), result.small]
      .filter((r) => r.isolateHeap)
      .map(
        (r) =>
          `Worker isolate ${r.isolateHeap.isolate} (${r.isolateHeap.markerCollections} collections in the marker), ${r.label}${r.round === undefined ? "" : ` (round ${r.round + 1})`}: V8 heap peak ${r.isolateHeap.peakUsedMB ?? "-"} MB used before a collection, ${r.isolateHeap.peakAfterMB ?? "-"} MB after one, ${r.isolateHeap.peakCommittedMB ?? "-"} MB committed, ${r.isolateHeap.collections} collections (${r.isolateHeap.full} full); ArrayBuffer contents not included.`,
      ),
    `workerd growth during a run (includes the local D1 and R2 simulators): export of ${ROWS.toLocaleString("en-US")} rows ${n(s.exportGrowthMiB, 1)} MiB, of ${n(result.small.rows)} rows ${n(s.smallGrowthMiB, 1)} MiB, floor copy ${n(s.floorGrowthMiB, 1)} MiB; two parts are ${2 * s.partMiB} MiB. Memory source: ${result.runs[0].memory.source}.`,
  );
  return out.join("\n");
}
