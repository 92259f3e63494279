// BENCH_ONLY=xapi (issue 29): xAPI forwarding under the Miniflare API with its real local Queues, D1
// and Durable Objects, sending to a minimal LRS on loopback in this process (it counts statement ids
// and answers 200 with them; it validates nothing, so the figures are our cost, not an LRS's).
//
//  1. Recording with and without forwarding: the learning activity scenario's write request
//     (`POST /api/progress/attempts`, 100 attempts for a member, as an institution admin) for an
//     institution with an LRS endpoint and for one without, alternating blocks of requests in
//     rounds (the order rotating per round). Each request is timed alone: before the next one starts,
//     the outbox is dispatched and every statement of the previous one has reached the LRS, so the
//     consumers' work (which on Cloudflare runs in isolates of its own) never shares workerd's one
//     thread with a measured request. Goal: the mean with an endpoint within 1.10× the mean without
//     (median of per-round ratios).
//  2. Forwarding burst: 10,000 attempts (100 members × 100) recorded while their institution had no
//     endpoint; then an endpoint is registered through the API and the 100 `attempts.recorded` events
//     are handed to the events queue again, as the dispatcher's retry or the outbox sweep would: from
//     that moment until the LRS has every statement — the events consumer building the statements and
//     writing them with their batches, the xAPI queue's consumer claiming, sending 50 per POST and
//     recording each answer. Checked: each statement id arrived exactly once, and D1 holds every
//     statement `sent` after one attempt.
//  3. Floor: the same request bodies (captured by the LRS in the burst, 50 statements per POST) sent
//     by a bare queue consumer (xapi-floor-worker.mjs) with the xAPI queue's settings, six at a time.
//     One unrecorded pass, then 3 measured passes (each takes well under a second): the floor's figure
//     is their median. Goal: our time per statement within 1.5× the floor's (workerd CPU per statement
//     reported beside).
//
//   BENCH_XAPI_MEMBERS=100        members in the burst (100 attempts each: 10,000 statements)
//   BENCH_XAPI_ROUNDS=3           rounds of the recording comparison
//   BENCH_XAPI_REQUESTS=10        requests per variant per round (after 3 unrecorded warm-up requests each)
//   BENCH_XAPI_PROFILE=<file>     a CPU profile of the burst (workerd's inspector) into <file>, its top
//                                 functions printed; a diagnostic: the sampling slows the burst
//   BENCH_XAPI_PERF=<file>        `perf record` of workerd's threads in the burst into <file> (Linux
//                                 perf): the native side too (SQLite, the D1 client's transport,
//                                 JSON, V8's helpers), which the inspector's profile does not see
//   BENCH_XAPI_ABLATION=1         with scripts/bench/xapi-without-writes.patch applied (a diagnostic,
//                                 never committed applied): the burst without its D1 writes, timed to
//                                 the LRS as always; what D1 holds is then not waited for or checked
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { basename, join } from "node:path";
import { hashPassword } from "../demo-data.mjs";
import {
  allProcStats,
  BENCH_SCRIPTS,
  linguaOptions,
  median,
  migrateEveryDatabase,
  randomKey,
  requestJson,
  startWorker,
  withProfilingEntry,
  workerOptions,
} from "./lib.mjs";
import {
  attemptsBody,
  BENCH_RATE_LIMIT_PER_MINUTE,
  BENCH_TENANT,
  benchCourse,
  seedBenchTenant,
} from "./seed.mjs";
import { d1StatementsEntry, startCpuProfiles, summary } from "./xapi-profile.mjs";

const BURST_MEMBERS = Number(process.env.BENCH_XAPI_MEMBERS || 100);
const ROUNDS = Number(process.env.BENCH_XAPI_ROUNDS || 3);
const REQUESTS_PER_BLOCK = Number(process.env.BENCH_XAPI_REQUESTS || 10);
const WARMUP_REQUESTS = 3;
/** A file: the burst is CPU-profiled into it (a diagnostic; sampling slows the burst). */
const PROFILE = process.env.BENCH_XAPI_PROFILE || "";
const PROFILE_PORT = 9329;
/** A file: `perf record` of the workerd processes in the burst (a diagnostic). */
const PERF = process.env.BENCH_XAPI_PERF || "";
const ABLATION = process.env.BENCH_XAPI_ABLATION === "1";
/** Measured passes of the floor (after one unrecorded pass); its figure is their median. */
const FLOOR_PASSES = 3;
const ATTEMPTS_PER_REQUEST = 100;
const STATEMENTS_PER_POST = 50;
/** As MAX_EVENTS_PER_MESSAGE in src/platform/events.ts. */
const EVENTS_PER_MESSAGE = 10;
const XAPI_QUEUE = "lingua-xapi-statements";
const LRS_BASIC = { username: "lingua", password: "bench-secret" };
const COURSE = "crs_bench_xapi";

const INSTITUTIONS = {
  with: { id: BENCH_TENANT.institution.id, label: "with an LRS endpoint" },
  without: { id: "ins_bench_plain", label: "without an endpoint" },
  burst: { id: "ins_bench_burst", label: "the burst" },
};

/** The minimal LRS: counts each statement id it is sent, answers 200 with the ids; keeps bodies when asked. */
function startLrs() {
  const state = {
    requests: 0,
    ids: 0,
    byId: new Map(),
    bodies: [],
    keepBodies: false,
    firstAt: 0,
    lastAt: 0,
    inFlight: 0,
    mostInFlight: 0,
    connections: 0,
  };
  const server = createServer((req, res) => {
    // Requests open at once (from their headers to their answer): the sender's concurrency as the
    // LRS sees it, a diagnostic beside the times.
    state.inFlight += 1;
    state.mostInFlight = Math.max(state.mostInFlight, state.inFlight);
    res.on("close", () => {
      state.inFlight -= 1;
    });
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      let ids = [];
      try {
        ids = JSON.parse(text).map((s) => s.id);
      } catch {
        res.writeHead(400, { "content-type": "application/json" }).end('{"message":"not JSON"}');
        return;
      }
      state.requests += 1;
      state.ids += ids.length;
      state.firstAt ||= performance.now();
      state.lastAt = performance.now();
      for (const id of ids) state.byId.set(id, (state.byId.get(id) ?? 0) + 1);
      if (state.keepBodies) state.bodies.push(text);
      res
        .writeHead(200, { "content-type": "application/json", "x-experience-api-version": "1.0.3" })
        .end(JSON.stringify(ids));
    });
  });
  server.keepAliveTimeout = 60_000;
  // Connections opened: a sender that does not reuse its connections opens one per POST.
  server.on("connection", () => {
    state.connections += 1;
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        state,
        reset(keepBodies = false) {
          Object.assign(state, {
            requests: 0,
            ids: 0,
            byId: new Map(),
            bodies: [],
            keepBodies,
            firstAt: 0,
            lastAt: 0,
            mostInFlight: state.inFlight,
            connections: 0,
          });
        },
        close: () => new Promise((r) => server.close(() => r())),
      }),
    ),
  );
}

/** CPU seconds (user + system) of the workerd processes started by this process. */
function workerdCpuSeconds() {
  let ticks = 0;
  for (const p of allProcStats().values())
    if (p.comm.startsWith("workerd") && p.ppid === process.pid) ticks += p.ticks;
  return ticks / 100;
}

/** `perf record` (call graphs, 4 kHz) of the workerd processes this process started, until `stop()`. */
async function startPerfRecord(file) {
  const pids = [...allProcStats()]
    .filter(([, p]) => p.comm.startsWith("workerd") && p.ppid === process.pid)
    .map(([pid]) => pid);
  const perf = spawn("perf", ["record", "-F", "4000", "-g", "-o", file, "-p", pids.join(",")], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  // perf attaches in well under this; the burst must not start before it samples.
  await new Promise((resolve) => setTimeout(resolve, 500));
  return {
    stop: () =>
      new Promise((resolve) => {
        perf.once("exit", resolve);
        perf.kill("SIGINT");
      }),
  };
}

async function waitFor(predicate, timeoutMs, what, progress) {
  const deadline = performance.now() + timeoutMs;
  let nextReport = performance.now() + 10_000;
  while (!(await predicate())) {
    if (performance.now() > deadline)
      throw new Error(`timed out waiting for ${what}${progress ? ` (${await progress()})` : ""}`);
    if (progress && performance.now() > nextReport) {
      console.error(`bench: waiting for ${what}: ${await progress()}`);
      nextReport += 10_000;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Two more enterprise institutions, each with a signed-in admin; members of all three; one course. */
async function seed(d1, baseUrl, memberCounts) {
  const tokens = {};
  for (const [key, { id }] of Object.entries(INSTITUTIONS)) {
    if (id === BENCH_TENANT.institution.id) continue;
    const password = `bench-${randomKey().slice(0, 12)}`;
    const email = `admin@${id.replace(/_/g, "-")}.lingua.test`;
    await d1.batch([
      d1
        .prepare(
          "INSERT INTO institutions (id, slug, name, plan, rate_limit_per_minute) VALUES (?, ?, ?, 'enterprise', ?)",
        )
        .bind(id, id.replace(/_/g, "-"), `Bench ${key}`, BENCH_RATE_LIMIT_PER_MINUTE),
      d1
        .prepare(
          "INSERT INTO users (id, email, name, role, institution_id, password_hash) VALUES (?, ?, ?, 'institution_admin', ?, ?)",
        )
        .bind(`usr_${id}_admin`, email, `Admin of ${key}`, id, hashPassword(password)),
    ]);
    const signIn = await requestJson(new URL("/api/auth/sign-in", baseUrl), {
      method: "POST",
      body: { email, password },
    });
    tokens[key] = signIn.body.token;
  }
  const members = {};
  const statements = [];
  for (const [key, count] of Object.entries(memberCounts)) {
    const institution = INSTITUTIONS[key].id;
    members[key] = Array.from({ length: count }, (_, i) => `usr_bx_${key}_${String(i).padStart(4, "0")}`);
    for (const [i, userId] of members[key].entries())
      statements.push(
        d1
          .prepare(
            "INSERT INTO users (id, email, name, role, institution_id, password_hash) VALUES (?, ?, ?, 'learner', ?, 'x')",
          )
          .bind(userId, `${userId}@bench.lingua.test`, `Learner ${key} ${i}`, institution),
      );
  }
  const course = benchCourse(d1, {
    key: "bx",
    course: COURSE,
    slug: "bench-xapi",
    itemCount: ATTEMPTS_PER_REQUEST,
  });
  statements.push(...course.statements);
  const items = course.items;
  for (let i = 0; i < statements.length; i += 200) await d1.batch(statements.slice(i, i + 200));
  return { tokens, members, items };
}

async function record(baseUrl, token, userId, items) {
  const started = performance.now();
  const response = await fetch(new URL("/api/progress/attempts", baseUrl), {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify(attemptsBody(userId, items)),
  });
  const text = await response.text();
  const ms = performance.now() - started;
  if (response.status !== 200) throw new Error(`attempts answered ${response.status}: ${text.slice(0, 300)}`);
  return ms;
}

/** Nothing left for a consumer: every outbox event dispatched, no xAPI statement pending. */
async function drained(d1) {
  const row = await d1
    .prepare(
      // A statement is pending on its own row, or sharing its batch's pending state.
      "SELECT (SELECT count(*) FROM outbox_events WHERE dispatched_at IS NULL) AS undispatched, (SELECT count(*) FROM xapi_statements WHERE status = 'pending') + (SELECT coalesce(sum(statement_count), 0) FROM xapi_batches WHERE log_status = 'pending') AS pending",
    )
    .first();
  return row.undispatched === 0 && row.pending === 0;
}

const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;

export async function runXapi({ config, scriptPath, log = (m) => console.error(m) }) {
  const lrs = await startLrs();
  const failures = [];
  const result = {
    settings: {
      burstMembers: BURST_MEMBERS,
      burstStatements: BURST_MEMBERS * ATTEMPTS_PER_REQUEST,
      rounds: ROUNDS,
      requestsPerBlock: REQUESTS_PER_BLOCK,
      attemptsPerRequest: ATTEMPTS_PER_REQUEST,
      queue: config.queueConsumers[XAPI_QUEUE],
    },
  };
  const options = linguaOptions(config, scriptPath);
  // Profiled: workerd's inspector open, and the consumers' D1 statements timed by an entry module.
  const lingua = await startWorker(
    PROFILE
      ? withProfilingEntry(options, {
          inspectorPort: PROFILE_PORT,
          scriptPath,
          name: "bench-d1-statements-entry.mjs",
          contents: d1StatementsEntry(`./${basename(scriptPath)}`),
        })
      : options,
  );
  try {
    const { d1 } = await migrateEveryDatabase(lingua.mf, config);
    const { token } = await seedBenchTenant({ d1, baseUrl: lingua.url, extraTokens: 0 });
    const perVariant = WARMUP_REQUESTS + ROUNDS * REQUESTS_PER_BLOCK;
    const { tokens, members, items } = await seed(d1, lingua.url, {
      with: perVariant,
      without: perVariant,
      burst: BURST_MEMBERS,
    });
    tokens.with = token;
    const register = (key, path) =>
      requestJson(new URL("/api/integrations/xapi-endpoints", lingua.url), {
        method: "POST",
        headers: { Authorization: `Bearer ${tokens[key]}` },
        body: {
          name: `Bench LRS (${key})`,
          endpoint: `${lrs.url}/${path}/`,
          version: "1.0.3",
          auth: { type: "basic", ...LRS_BASIC },
        },
        expect: 201,
      });

    // 1. Recording with and without an endpoint, each request alone.
    await register("with", "recording");
    log(
      `bench: xapi — recording ${ATTEMPTS_PER_REQUEST} attempts per request, with and without an endpoint, ${ROUNDS} round(s) of ${REQUESTS_PER_BLOCK} each…`,
    );
    const next = { with: 0, without: 0 };
    const recordOne = async (variant) => {
      const userId = members[variant][next[variant]++];
      const ms = await record(lingua.url, tokens[variant], userId, items);
      await waitFor(
        () => drained(d1),
        60_000,
        `the consumers after a request ${INSTITUTIONS[variant].label}`,
      );
      return ms;
    };
    for (let i = 0; i < WARMUP_REQUESTS; i++)
      for (const variant of ["without", "with"]) await recordOne(variant);
    const rounds = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ["without", "with"] : ["with", "without"];
      const samples = { with: [], without: [] };
      for (const variant of order)
        for (let i = 0; i < REQUESTS_PER_BLOCK; i++) samples[variant].push(await recordOne(variant));
      rounds.push({
        order,
        with: { meanMs: mean(samples.with), p50Ms: median(samples.with), samples: samples.with },
        without: { meanMs: mean(samples.without), p50Ms: median(samples.without), samples: samples.without },
        meanRatio: mean(samples.with) / mean(samples.without),
        p50Ratio: median(samples.with) / median(samples.without),
      });
    }
    const recordingStatements = lrs.state.byId.size;
    result.recording = {
      rounds,
      withMeanMs: median(rounds.map((r) => r.with.meanMs)),
      withoutMeanMs: median(rounds.map((r) => r.without.meanMs)),
      withP50Ms: median(rounds.map((r) => r.with.p50Ms)),
      withoutP50Ms: median(rounds.map((r) => r.without.p50Ms)),
      meanRatio: median(rounds.map((r) => r.meanRatio)),
      p50Ratio: median(rounds.map((r) => r.p50Ratio)),
      statementsForwarded: recordingStatements,
    };
    if (recordingStatements < perVariant * ATTEMPTS_PER_REQUEST)
      failures.push(
        `recording: the LRS received ${recordingStatements} statements for ${perVariant * ATTEMPTS_PER_REQUEST} attempts`,
      );
    log(
      `bench: xapi — recording mean ${result.recording.withMeanMs.toFixed(1)} ms with, ${result.recording.withoutMeanMs.toFixed(1)} ms without: ${result.recording.meanRatio.toFixed(2)}×`,
    );

    // 2. The burst: attempts recorded while the institution forwarded nothing, then handed over again.
    log(`bench: xapi — recording ${BURST_MEMBERS * ATTEMPTS_PER_REQUEST} attempts for the burst…`);
    for (let i = 0; i < members.burst.length; i += 4)
      await Promise.all(
        members.burst.slice(i, i + 4).map((userId) => record(lingua.url, tokens.burst, userId, items)),
      );
    await waitFor(() => drained(d1), 120_000, "the burst's recording to be dispatched");
    const { results: events } = await d1
      .prepare(
        "SELECT id FROM outbox_events WHERE type = 'attempts.recorded' AND institution_id = ? ORDER BY created_at, id",
      )
      .bind(INSTITUTIONS.burst.id)
      .all();
    const endpoint = (await register("burst", "burst")).body;
    const expected = BURST_MEMBERS * ATTEMPTS_PER_REQUEST;
    lrs.reset(true);
    const producer = await lingua.mf.getQueueProducer("EVENTS_QUEUE");
    log(
      `bench: xapi — burst: ${events.length} attempts.recorded events (${expected.toLocaleString("en-US")} attempts) to the events queue…`,
    );
    if (ABLATION)
      log(
        "bench: xapi — BENCH_XAPI_ABLATION: a diagnostic run, the burst without its D1 writes; D1 is not checked",
      );
    if (PROFILE) await requestJson(new URL("/__d1-statements", lingua.url));
    const profiler = PROFILE ? await startCpuProfiles(PROFILE_PORT, /lingua-api$|d1:db$/) : null;
    const perf = PERF ? await startPerfRecord(PERF) : null;
    const cpuBefore = workerdCpuSeconds();
    const started = performance.now();
    const messages = [];
    for (let i = 0; i < events.length; i += EVENTS_PER_MESSAGE)
      messages.push({
        body: { event_ids: events.slice(i, i + EVENTS_PER_MESSAGE).map((e) => e.id) },
        contentType: "json",
      });
    for (let i = 0; i < messages.length; i += 100) await producer.sendBatch(messages.slice(i, i + 100));
    // A diagnostic, not the goal: when the events consumer had written every statement (its part of
    // the work, building and storing), polled every 100 ms.
    let writtenMs = null;
    const written = (async () => {
      while (writtenMs === null) {
        const row = await d1
          .prepare("SELECT coalesce(sum(statement_count), 0) AS n FROM xapi_batches WHERE endpoint_id = ?")
          .bind(endpoint.id)
          .first();
        if (row.n >= expected) writtenMs = performance.now() - started;
        else await new Promise((r) => setTimeout(r, 100));
      }
    })();
    await waitFor(
      () => lrs.state.byId.size >= expected,
      20 * 60_000,
      `${expected} statements at the LRS`,
      () => `${lrs.state.byId.size} received`,
    );
    const totalMs = performance.now() - started;
    const cpuSeconds = workerdCpuSeconds() - cpuBefore;
    if (perf) await perf.stop();
    const firstMs = lrs.state.firstAt - started;
    if (profiler) {
      const profiles = await profiler.stop();
      for (const [i, [title, profile]] of Object.entries(profiles).entries()) {
        writeFileSync(`${PROFILE}.${i}.cpuprofile`, JSON.stringify(profile));
        const top = summary(profile, 30);
        log(
          `bench: xapi — CPU profile of ${title} in the burst (${PROFILE}.${i}.cpuprofile): ${top.totalMs.toFixed(0)} ms on CPU`,
        );
        log(`  self:\n${top.self.join("\n")}\n  inclusive:\n${top.inclusive.join("\n")}`);
      }
      const statements = (await requestJson(new URL("/__d1-statements", lingua.url))).body;
      writeFileSync(`${PROFILE}.d1.json`, JSON.stringify(statements, null, 1));
      log(
        `bench: xapi — the consumers' D1 statements in the burst (SQLite ms, statements, rows read, rows written):`,
      );
      for (const s of statements.slice(0, 20))
        log(
          `${s.ms.toFixed(1).padStart(9)} ms ${String(s.statements).padStart(5)} ${String(s.rowsRead).padStart(8)} ${String(s.rowsWritten).padStart(8)}  ${s.sql}`,
        );
    }
    // Without the writes (BENCH_XAPI_ABLATION) D1 holds nothing to wait for.
    if (!ABLATION) await written;
    else writtenMs = 0;
    const countSent = () =>
      d1
        .prepare(
          // Each statement of the batches' packed log: its batch's state while it shares it, else its own row's.
          "SELECT count(*) AS statements, sum(coalesce(s.status, b.log_status) = 'sent') AS sent, sum(CASE WHEN b.log_status IS NULL THEN s.attempts ELSE b.log_attempts END) AS attempts, (SELECT count(*) FROM xapi_batches WHERE endpoint_id = ?1) AS batches FROM xapi_batches b JOIN json_each(b.entries) j LEFT JOIN xapi_statements s ON b.log_status IS NULL AND s.id = j.value ->> 0 WHERE b.endpoint_id = ?1",
        )
        .bind(endpoint.id)
        .first();
    if (!ABLATION)
      await waitFor(
        async () => (await countSent()).sent >= expected,
        60_000,
        "every statement recorded sent",
      );
    const recordedMs = performance.now() - started;
    await new Promise((r) => setTimeout(r, 3000)); // anything sent twice would arrive now
    const rows = await countSent();
    const duplicates = lrs.state.ids - lrs.state.byId.size;
    if (duplicates !== 0) failures.push(`burst: ${duplicates} statement ids reached the LRS more than once`);
    if (lrs.state.byId.size !== expected || rows.statements !== expected)
      failures.push(
        `burst: the LRS has ${lrs.state.byId.size} distinct statements and D1 ${rows.statements}, expected ${expected}`,
      );
    if (rows.sent !== expected || rows.attempts !== expected)
      failures.push(
        `burst: D1 has ${rows.sent} statements sent with ${rows.attempts} attempts, expected ${expected} each`,
      );
    result.burst = {
      statements: lrs.state.byId.size,
      requests: lrs.state.requests,
      idsReceived: lrs.state.ids,
      duplicates,
      d1: rows,
      totalMs,
      firstMs,
      writtenMs,
      mostInFlight: lrs.state.mostInFlight,
      connections: lrs.state.connections,
      recordedMs,
      statementsPerSecond: expected / (totalMs / 1000),
      workerdCpuSeconds: cpuSeconds,
      cpuMsPerStatement: (cpuSeconds * 1000) / expected,
    };
    log(
      `bench: xapi — ${expected.toLocaleString("en-US")} statements in ${(totalMs / 1000).toFixed(1)} s (${result.burst.statementsPerSecond.toFixed(0)}/s), ${lrs.state.requests} POSTs, ${duplicates} duplicates`,
    );
  } finally {
    await lingua.dispose();
  }

  // 3. The floor: the same bodies, re-cut 50 statements per POST, through a bare queue consumer.
  const statements = lrs.state.bodies.flatMap((text) => JSON.parse(text));
  const bodies = [];
  for (let i = 0; i < statements.length; i += STATEMENTS_PER_POST)
    bodies.push(JSON.stringify(statements.slice(i, i + STATEMENTS_PER_POST)));
  lrs.reset();
  const floorQueue = "bench-xapi-floor";
  const ours = config.queueConsumers[XAPI_QUEUE];
  const floor = await startWorker(
    workerOptions({
      name: "xapi-floor",
      scriptPath: join(BENCH_SCRIPTS, "xapi-floor-worker.mjs"),
      compatibilityDate: config.compatibilityDate,
      queueProducers: { FLOOR_QUEUE: { queueName: floorQueue } },
      queueConsumers: {
        [floorQueue]: {
          maxBatchSize: ours.maxBatchSize,
          maxBatchTimeout: ours.maxBatchTimeout,
          maxRetries: 3,
        },
      },
    }),
  );
  try {
    await requestJson(new URL("/load", floor.url), { method: "POST", body: bodies });
    // One unrecorded pass (the first queue invocation, the first connections), then FLOOR_PASSES
    // measured ones: a pass takes a fraction of a second, too short for one to stand alone.
    const passes = [];
    for (let pass = 0; pass <= FLOOR_PASSES; pass++) {
      lrs.reset();
      log(
        `bench: xapi — floor ${pass === 0 ? "warm-up" : `pass ${pass}/${FLOOR_PASSES}`}: ${statements.length.toLocaleString("en-US")} statements in ${bodies.length} POSTs…`,
      );
      const cpuBefore = workerdCpuSeconds();
      const started = performance.now();
      await requestJson(
        new URL(`/enqueue?target=${encodeURIComponent(`${lrs.url}/floor/statements`)}`, floor.url),
      );
      await waitFor(
        () => lrs.state.ids >= statements.length,
        10 * 60_000,
        `${statements.length} floor statements`,
        () => `${lrs.state.ids} received`,
      );
      const totalMs = performance.now() - started;
      const cpuSeconds = workerdCpuSeconds() - cpuBefore;
      if (pass > 0)
        passes.push({
          totalMs,
          cpuSeconds,
          requests: lrs.state.requests,
          statements: lrs.state.ids,
          mostInFlight: lrs.state.mostInFlight,
          connections: lrs.state.connections,
        });
    }
    const totalMs = median(passes.map((p) => p.totalMs));
    const cpuSeconds = median(passes.map((p) => p.cpuSeconds));
    result.floor = {
      passes,
      statements: statements.length,
      requests: bodies.length,
      totalMs,
      statementsPerSecond: statements.length / (totalMs / 1000),
      workerdCpuSeconds: cpuSeconds,
      cpuMsPerStatement: (cpuSeconds * 1000) / statements.length,
    };
  } finally {
    await floor.dispose();
    await lrs.close();
  }
  result.goals = {
    wallPerStatementRatio:
      result.burst.totalMs / result.burst.statements / (result.floor.totalMs / result.floor.statements),
    cpuPerStatementRatio: result.burst.cpuMsPerStatement / result.floor.cpuMsPerStatement,
    recordingMeanRatio: result.recording.meanRatio,
  };
  // A goal missed is a verdict, not an invalid run: only lost or doubled statements are failures.
  result.goals.forwardingMet = result.goals.wallPerStatementRatio <= 1.5;
  result.goals.recordingMet = result.goals.recordingMeanRatio <= 1.1;
  result.failures = failures;
  return result;
}

export function xapiReport(r) {
  const f = (n, d = 0) =>
    Number(n).toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });
  const rec = r.recording;
  return [
    "",
    "xAPI forwarding (BENCH_ONLY=xapi)",
    `  recording (POST /api/progress/attempts, ${r.settings.attemptsPerRequest} attempts, each request alone), ${r.settings.rounds} round(s) of ${r.settings.requestsPerBlock} per variant:`,
    `    with an endpoint: mean ${f(rec.withMeanMs, 1)} ms, p50 ${f(rec.withP50Ms, 1)} ms; without: mean ${f(rec.withoutMeanMs, 1)} ms, p50 ${f(rec.withoutP50Ms, 1)} ms`,
    `    with / without, mean: ${rec.rounds.map((x) => f(x.meanRatio, 2)).join(" ")} → ${f(rec.meanRatio, 2)}× (goal ≤ 1.10×); p50: ${rec.rounds.map((x) => f(x.p50Ratio, 2)).join(" ")} → ${f(rec.p50Ratio, 2)}×; ${f(rec.statementsForwarded)} statements forwarded meanwhile`,
    `  burst: ${f(r.burst.statements)} statements (${f(r.settings.burstMembers)} members × ${r.settings.attemptsPerRequest} attempts) at the LRS in ${f(r.burst.totalMs / 1000, 2)} s = ${f(r.burst.statementsPerSecond)}/s (all recorded sent at ${f(r.burst.recordedMs / 1000, 2)} s); ${f(r.burst.requests)} POSTs, ${r.burst.duplicates} duplicates; D1: ${f(r.burst.d1.sent)} sent, ${f(r.burst.d1.attempts)} attempts, ${f(r.burst.d1.batches)} batches`,
    `    diagnostic: the first statement at the LRS after ${f(r.burst.firstMs / 1000, 2)} s; all ${f(r.burst.statements)} written by the events consumer after ${f(r.burst.writtenMs / 1000, 2)} s; at most ${r.burst.mostInFlight} POSTs open at once at the LRS over ${r.burst.connections} connections (the floor: ${r.floor.passes.map((p) => `${p.mostInFlight} over ${p.connections}`).join(" / ")})`,
    `  floor (the same bodies, ${STATEMENTS_PER_POST} per POST, bare consumer): ${f(r.floor.statements)} in ${f(r.floor.totalMs / 1000, 2)} s = ${f(r.floor.statementsPerSecond)}/s (median of ${r.floor.passes.length} passes: ${r.floor.passes.map((p) => f(p.totalMs / 1000, 2)).join(" / ")} s)`,
    `  per statement: wall ${f(r.burst.totalMs / r.burst.statements, 3)} ms vs floor ${f(r.floor.totalMs / r.floor.statements, 3)} ms = ${f(r.goals.wallPerStatementRatio, 2)}× (goal ≤ 1.5×); workerd CPU ${f(r.burst.cpuMsPerStatement, 3)} ms vs ${f(r.floor.cpuMsPerStatement, 3)} ms = ${f(r.goals.cpuPerStatementRatio, 2)}×`,
    `  goals: forwarding ${r.goals.forwardingMet ? "met" : "NOT MET"}; recording ${r.goals.recordingMet ? "met" : "NOT MET"}${r.failures.length ? "" : "; nothing lost or sent twice"}`,
    ...(r.failures.length ? [`  FAILED: ${r.failures.join("; ")}`] : []),
  ].join("\n");
}
