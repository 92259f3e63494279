// BENCH_ONLY=webhooks (issue 4): the webhook pipeline under the Miniflare API with its real local
// Queues, D1 and Durable Objects, delivering to a receiver on loopback in this process.
//
//  1. Latency: an attempt that completes a lesson, until the signed `lesson.completed` reaches the
//     receiver (the outbox, the fan-out queue, the delivery queue, the POST), sampled one at a time.
//  2. Burst: 10,000 events for an institution with 10 webhooks — 100,000 deliveries — from the
//     fan-out queue to the last POST: deliveries/second, and that the receiver got each delivery
//     exactly once and D1 records each as succeeded with one attempt.
//  3. Floor: the same 100,000 POSTs through a bare consumer that only signs and sends
//     (webhook-floor-worker.mjs), with the same queue settings: the cost per delivery of ours,
//     in wall time and in CPU time of the workerd process, against it.
//  4. API latency during the burst: the default bench's API goals — /healthz against the bare floor,
//     GET /api/auth/me against the DO floor, the token list against the DO + D1 floors (by mean
//     latency) — at concurrency 1 in rounds of one-second windows, idle and while the queue drains
//     (only rounds that ended before the last delivery count). The floors (floor-worker.mjs) run in
//     the same workerd process as Lingua, so both wait alike for the queue consumers on workerd's one
//     JavaScript thread (on Cloudflare consumers run in isolates of their own); routes and floors are
//     reached through their direct sockets. The DO floor in a workerd process of its own, untouched
//     by the burst, is measured beside them and reported against `me` as a diagnostic.
//
//   BENCH_WEBHOOK_SAMPLES=50  latency samples;  BENCH_WEBHOOK_EVENTS=10000  events in the burst
//   BENCH_DELIVERY_BATCH_TIMEOUT=1  the delivery queue's max_batch_timeout for this run (wrangler.toml: 0)
import { createServer } from "node:http";
import { join } from "node:path";
import {
  API_GOALS,
  allProcStats,
  BENCH_SCRIPTS,
  floorOptions,
  linguaOptions,
  median,
  migrateEveryDatabase,
  startLoadGenerator,
  startWorker,
  workerOptions,
} from "./lib.mjs";
import { seedBenchTenant } from "./seed.mjs";

/** As MAX_EVENTS_PER_MESSAGE in src/platform/events.ts. */
const EVENTS_PER_MESSAGE = 10;
const LATENCY_SAMPLES = Number(process.env.BENCH_WEBHOOK_SAMPLES || 50);
const BURST_EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS || 10_000);
const BURST_WEBHOOKS = 10;
/** The floor worker shares Lingua's Miniflare; its entry routes requests for this host to it. */
const FLOOR_HOST = "floor.bench.test";
/** Overrides max_batch_timeout of the delivery queue (ours and the floor's) for a throughput-oriented run. */
const DELIVERY_BATCH_TIMEOUT = process.env.BENCH_DELIVERY_BATCH_TIMEOUT;

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** A receiver that answers 204 at once and counts requests per delivery id. */
function startReceiver() {
  const state = { requests: 0, byDelivery: new Map(), lessonArrivals: new Map(), firstAt: 0, lastAt: 0 };
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const now = performance.now();
      state.requests += 1;
      state.firstAt ||= now;
      state.lastAt = now;
      const id = req.headers["x-webhook-delivery"];
      state.byDelivery.set(id, (state.byDelivery.get(id) ?? 0) + 1);
      if (req.url.startsWith("/latency")) {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        if (body.type === "lesson.completed") state.lessonArrivals.set(body.data.lesson_id, now);
      }
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        state,
        reset() {
          Object.assign(state, {
            requests: 0,
            byDelivery: new Map(),
            lessonArrivals: new Map(),
            firstAt: 0,
            lastAt: 0,
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

async function waitFor(predicate, timeoutMs, what, progress) {
  const deadline = performance.now() + timeoutMs;
  let nextReport = performance.now() + 10_000;
  while (!predicate()) {
    if (performance.now() > deadline)
      throw new Error(`timed out waiting for ${what}${progress ? ` (${progress()})` : ""}`);
    if (progress && performance.now() > nextReport) {
      console.error(`bench: waiting for ${what}: ${progress()}`);
      nextReport += 10_000;
    }
    await new Promise((r) => setTimeout(r, 2));
  }
}

async function api(baseUrl, path, token, body) {
  const response = await fetch(new URL(path, baseUrl), {
    method: body ? "POST" : "GET",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${path}: ${response.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** A learner and a published course of `lessons` one-item lessons, straight into D1. */
async function seedCourse(d1, lessons) {
  const statements = [
    d1.prepare(
      "INSERT INTO users (id, email, name, role, institution_id, password_hash) VALUES ('usr_bench_learner', 'learner@bench.lingua.test', 'Bench Learner', 'learner', 'ins_bench', 'x')",
    ),
    d1
      .prepare(
        "INSERT INTO courses (id, slug, title, description, target_language, source_language, cefr_from, cefr_to, published, published_at, lesson_count, item_count, estimated_minutes, tags) VALUES ('crs_bench_hooks', 'bench-hooks', 'Bench', 'Bench course.', 'es', 'en', 'A1', 'A1', 1, ?, ?, ?, ?, '[]')",
      )
      .bind(new Date().toISOString(), lessons, lessons, lessons * 2),
  ];
  for (let l = 0; l < lessons; l++) {
    statements.push(
      d1
        .prepare(
          "INSERT INTO lessons (id, course_id, position, title, cefr_level, objectives, item_count, estimated_minutes) VALUES (?, 'crs_bench_hooks', ?, ?, 'A1', '[]', 1, 2)",
        )
        .bind(`les_bh_${l}`, l + 1, `Lesson ${l + 1}`),
      d1
        .prepare(
          "INSERT INTO trainings (id, lesson_id, course_id, position, kind, title, item_count) VALUES (?, ?, 'crs_bench_hooks', 1, 'practice', 'Block', 1)",
        )
        .bind(`trn_bh_${l}`, `les_bh_${l}`),
      d1
        .prepare(
          "INSERT INTO training_items (id, training_id, lesson_id, course_id, position, type, skill, cefr_level, xp, content) VALUES (?, ?, ?, 'crs_bench_hooks', 1, 'multiple_choice', 'reading', 'A1', 10, '{}')",
        )
        .bind(`itm_bh_${l}`, `trn_bh_${l}`, `les_bh_${l}`),
    );
  }
  for (let i = 0; i < statements.length; i += 300) await d1.batch(statements.slice(i, i + 300));
}

/**
 * The default bench's API goals (API_GOALS), measured here idle and while a burst drains: each route
 * against its floors in the same workerd, by the goal's first latency metric.
 */
const BURST_API_GOALS = API_GOALS.map((goal) => ({
  id: goal.subject,
  label: goal.text,
  floors: goal.floors,
  metric: goal.by.find((metric) => metric !== "rps"),
  max: goal.max,
}));

/**
 * Rounds of one-second windows at concurrency 1, one window per target in `windows` ({ id: { url,
 * headers } }: the BURST_API_GOALS routes, their floors, and `doOwn`, the DO floor in a workerd of its
 * own, a diagnostic), for `durationMs` or until `keepGoing()` turns false; a round that was still
 * running when it did is dropped, so every round counted saw the burst throughout. A goal's ratio
 * is the median of its per-round ratios.
 */
async function apiAgainstFloors(load, windows, { durationMs, keepGoing = () => true }) {
  const rounds = [];
  const end = performance.now() + durationMs;
  while (performance.now() < end && keepGoing()) {
    const round = {};
    for (const [id, { url, headers = {} }] of Object.entries(windows)) {
      round[id] = (await load.run({ url, headers, connections: 1, duration: 1, warmup: 0 })).latencyMs;
    }
    if (!keepGoing()) break;
    rounds.push(round);
  }
  const perRound = (ours, floors, metric) =>
    rounds.map((r) => r[ours][metric] / floors.reduce((sum, f) => sum + r[f][metric], 0));
  return {
    rounds: rounds.length,
    goals: BURST_API_GOALS.map((goal) => {
      const ratios = perRound(goal.id, goal.floors, goal.metric);
      const ratio = rounds.length ? median(ratios) : null;
      return {
        ...goal,
        p50: rounds.length ? median(rounds.map((r) => r[goal.id].p50)) : null,
        p99: rounds.length ? median(rounds.map((r) => r[goal.id].p99)) : null,
        floor: rounds.length
          ? median(rounds.map((r) => goal.floors.reduce((sum, f) => sum + r[f][goal.metric], 0)))
          : null,
        ratio,
        perRound: ratios,
        met: ratio !== null && ratio <= goal.max,
      };
    }),
    meAgainstOwnWorkerd: rounds.length
      ? {
          doOwnP50: median(rounds.map((r) => r.doOwn.p50)),
          ratio: median(perRound("me", ["doOwn"], "p50")),
          perRound: perRound("me", ["doOwn"], "p50"),
        }
      : null,
  };
}

export async function runWebhooks({ config: wranglerConfig, scriptPath, log = (m) => console.error(m) }) {
  const config = structuredClone(wranglerConfig);
  if (DELIVERY_BATCH_TIMEOUT !== undefined)
    config.queueConsumers["lingua-webhook-deliveries"].maxBatchTimeout = Number(DELIVERY_BATCH_TIMEOUT);
  const receiver = await startReceiver();
  const failures = [];
  let doFloorProcess = null; // the diagnostic floor in a workerd process of its own
  const result = {
    settings: {
      latencySamples: LATENCY_SAMPLES,
      burstEvents: BURST_EVENTS,
      webhooks: BURST_WEBHOOKS,
      queues: config.queueConsumers,
    },
  };
  const withoutAddress = ({ host, port, ...options }) => options;
  const lingua = await startWorker({
    host: "127.0.0.1",
    port: 0,
    workers: [
      withoutAddress(linguaOptions(config, scriptPath)),
      { ...withoutAddress(floorOptions(config)), routes: [`${FLOOR_HOST}/*`] },
    ],
  });
  let load = null;
  try {
    // Everything through Miniflare's entry, as in the default bench: the floors by their host name.
    doFloorProcess = await startWorker(floorOptions(config));
    const floorUrl = (path, base = lingua.url, headers = { Host: FLOOR_HOST }) => ({
      url: new URL(path, base).toString(),
      headers,
    });
    const apiUrl = (path, auth) => ({ url: new URL(path, lingua.url).toString(), headers: auth });
    load = startLoadGenerator();
    const { d1 } = await migrateEveryDatabase(lingua.mf, config);
    const { token } = await seedBenchTenant({ d1, baseUrl: lingua.url, extraTokens: 30 });
    const auth = { Authorization: `Bearer ${token}` };
    // Each route, then its floors, so that a goal's windows are close together.
    const windows = {
      healthz: apiUrl("/healthz"),
      bare: floorUrl("/bare"),
      me: apiUrl("/api/auth/me", auth),
      do: floorUrl("/do"),
      tokens: apiUrl("/api/integrations/tokens", auth),
      d1: floorUrl("/d1"),
      doOwn: floorUrl("/do", doFloorProcess.url, {}),
    };
    await seedCourse(d1, LATENCY_SAMPLES + 5);

    // 1. Latency, one lesson at a time.
    log("bench: webhooks — latency from a lesson-completing attempt to its signed delivery…");
    await api(lingua.url, "/api/integrations/webhooks", token, {
      url: `${receiver.url}/latency`,
      events: ["lesson.completed"],
    });
    const latencies = [];
    for (let l = 0; l < LATENCY_SAMPLES + 3; l++) {
      const lesson = `les_bh_${l}`;
      const started = performance.now();
      await api(lingua.url, "/api/progress/attempts", token, {
        user_id: "usr_bench_learner",
        id: crypto.randomUUID(),
        training_item_id: `itm_bh_${l}`,
        score: 1,
        correct: true,
        duration_seconds: 10,
        occurred_at: new Date(Date.now() - 60_000).toISOString(),
      });
      await waitFor(() => receiver.state.lessonArrivals.has(lesson), 60_000, `the delivery of ${lesson}`);
      if (l >= 3) latencies.push(receiver.state.lessonArrivals.get(lesson) - started); // the first three warm up
    }
    result.latency = {
      samples: latencies.length,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      maxMs: Math.max(...latencies),
    };
    log(
      `bench: webhooks — latency p50 ${result.latency.p50Ms.toFixed(0)} ms, p99 ${result.latency.p99Ms.toFixed(0)} ms`,
    );

    // 2. Burst: 10 webhooks on everything, 10,000 events committed to the outbox and published.
    await d1.prepare("DELETE FROM webhooks").run();
    for (let h = 0; h < BURST_WEBHOOKS; h++)
      await api(lingua.url, "/api/integrations/webhooks", token, {
        url: `${receiver.url}/burst/${h}`,
        events: ["*"],
      });
    const producer = await lingua.mf.getQueueProducer("EVENTS_QUEUE");
    const expected = BURST_EVENTS * BURST_WEBHOOKS;

    /**
     * 10,000 events committed to the outbox and published to the fan-out queue, until the receiver
     * has every delivery; `whileDraining()` runs meanwhile when given. Checks exactly-once delivery.
     */
    const burst = async (tag, whileDraining = null) => {
      receiver.reset();
      const createdAt = new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
      const ids = Array.from({ length: BURST_EVENTS }, (_, i) => `evt_${tag}_${String(i).padStart(6, "0")}`);
      for (let i = 0; i < ids.length; i += 500) {
        const statements = [];
        for (let j = i; j < Math.min(i + 500, ids.length); j += 10) {
          const chunk = ids.slice(j, Math.min(j + 10, ids.length));
          statements.push(
            d1
              .prepare(
                `INSERT INTO outbox_events (id, type, institution_id, user_id, payload, created_at) VALUES ${chunk.map(() => "(?, 'lesson.completed', 'ins_bench', 'usr_bench_learner', ?, ?)").join(", ")}`,
              )
              .bind(
                ...chunk.flatMap((eventId, k) => [
                  eventId,
                  JSON.stringify({
                    user_id: "usr_bench_learner",
                    lesson_id: `les_${tag}_${j + k}`,
                    course_id: "crs_bench_hooks",
                    score: 1,
                    items: 1,
                    completed_at: createdAt,
                  }),
                  createdAt,
                ]),
              ),
          );
        }
        await d1.batch(statements);
      }
      log(
        `bench: webhooks — burst (${tag}) of ${BURST_EVENTS.toLocaleString("en-US")} events to ${BURST_WEBHOOKS} webhooks (${expected.toLocaleString("en-US")} deliveries)…`,
      );
      const cpuBefore = workerdCpuSeconds();
      const started = performance.now();
      // Published as publishEvents does: up to 50 event ids per message, 100 messages per sendBatch.
      const messages = [];
      for (let i = 0; i < ids.length; i += EVENTS_PER_MESSAGE)
        messages.push({ body: { event_ids: ids.slice(i, i + EVENTS_PER_MESSAGE) }, contentType: "json" });
      for (let i = 0; i < messages.length; i += 100) await producer.sendBatch(messages.slice(i, i + 100));
      const alongside = whileDraining?.(() => receiver.state.byDelivery.size < expected);
      await waitFor(
        () => receiver.state.byDelivery.size >= expected,
        20 * 60_000,
        `${expected} deliveries`,
        () => `${receiver.state.byDelivery.size} received`,
      );
      const totalMs = performance.now() - started;
      const cpuSeconds = workerdCpuSeconds() - cpuBefore;
      const measuredAlongside = await alongside;
      await new Promise((r) => setTimeout(r, 3000)); // anything sent twice would arrive now
      const duplicates = receiver.state.requests - receiver.state.byDelivery.size;
      const rows = await d1
        .prepare(
          `SELECT count(*) AS deliveries, sum(status = 'succeeded') AS succeeded, sum(attempt_count) AS attempts,
             (SELECT count(*) FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.event_id LIKE ?1) AS logged
           FROM webhook_deliveries WHERE event_id LIKE ?1`,
        )
        .bind(`evt_${tag}_%`)
        .first();
      if (duplicates !== 0)
        failures.push(`burst ${tag}: ${duplicates} deliveries were received more than once`);
      if (rows.deliveries !== expected || rows.succeeded !== expected)
        failures.push(`burst ${tag}: D1 has ${rows.succeeded} of ${expected} deliveries succeeded`);
      if (rows.attempts !== expected || rows.logged !== expected)
        failures.push(
          `burst ${tag}: D1 counts ${rows.attempts} attempts and logs ${rows.logged}, not one each`,
        );
      log(
        `bench: webhooks — ${expected.toLocaleString("en-US")} deliveries in ${(totalMs / 1000).toFixed(1)} s (${(expected / (totalMs / 1000)).toFixed(0)}/s), ${duplicates} duplicates`,
      );
      return {
        deliveries: receiver.state.byDelivery.size,
        requests: receiver.state.requests,
        duplicates,
        d1: rows,
        totalMs,
        deliveriesPerSecond: expected / (totalMs / 1000),
        workerdCpuSeconds: cpuSeconds,
        cpuMsPerDelivery: (cpuSeconds * 1000) / expected,
        measuredAlongside,
      };
    };

    // The consumer's own cost per delivery, with nothing else running; then a second burst with the
    // API measured while it drains (the API's requests take their share of the same thread).
    result.burst = await burst("burst");
    const apiIdle = await apiAgainstFloors(load, windows, { durationMs: 21_000 });
    const withApi = await burst("burstapi", (keepGoing) =>
      apiAgainstFloors(load, windows, { durationMs: 10 * 60_000, keepGoing }),
    );
    result.burst.apiIdle = apiIdle;
    result.burst.apiDuringBurst = withApi.measuredAlongside;
    result.burstWithApi = { ...withApi, measuredAlongside: undefined };
  } finally {
    await lingua.dispose();
    await doFloorProcess?.dispose();
    await load?.close();
  }

  // 3. The floor: the same number of signed POSTs through a bare consumer.
  receiver.reset();
  const floorQueue = "bench-floor-deliveries";
  const deliveriesConsumer = config.queueConsumers["lingua-webhook-deliveries"];
  const floor = await startWorker(
    workerOptions({
      name: "webhook-floor",
      scriptPath: join(BENCH_SCRIPTS, "webhook-floor-worker.mjs"),
      compatibilityDate: config.compatibilityDate,
      queueProducers: { FLOOR_QUEUE: { queueName: floorQueue } },
      queueConsumers: {
        [floorQueue]: {
          maxBatchSize: deliveriesConsumer.maxBatchSize,
          maxBatchTimeout: deliveriesConsumer.maxBatchTimeout,
          maxRetries: 3,
        },
      },
    }),
  );
  try {
    const expected = BURST_EVENTS * BURST_WEBHOOKS;
    log(`bench: webhooks — floor: ${expected.toLocaleString("en-US")} bare signed POSTs…`);
    const cpuBefore = workerdCpuSeconds();
    const started = performance.now();
    // Miniflare's local queue fails sends once tens of thousands of messages wait (an internal error
    // 15000), so the floor is fed 1,000 at a time while at most 5,000 are outstanding — our own
    // pipeline is paced the same way by its fan-out.
    for (let enqueued = 0; enqueued < expected; enqueued += 1_000) {
      await waitFor(
        () => enqueued - receiver.state.requests < 5_000,
        10 * 60_000,
        "the floor's backlog to drain",
      );
      const response = await fetch(
        new URL(
          `/enqueue?n=${Math.min(1_000, expected - enqueued)}&target=${encodeURIComponent(`${receiver.url}/floor`)}`,
          floor.url,
        ),
      );
      const text = await response.text();
      if (!response.ok) throw new Error(`floor enqueue answered ${response.status}: ${text.slice(0, 300)}`);
    }
    await waitFor(
      () => receiver.state.requests >= expected,
      10 * 60_000,
      `${expected} floor deliveries`,
      () => `${receiver.state.requests} received`,
    );
    const ms = performance.now() - started;
    const cpuSeconds = workerdCpuSeconds() - cpuBefore;
    result.floor = {
      deliveries: receiver.state.requests,
      totalMs: ms,
      deliveriesPerSecond: expected / (ms / 1000),
      workerdCpuSeconds: cpuSeconds,
      cpuMsPerDelivery: (cpuSeconds * 1000) / expected,
    };
  } finally {
    await floor.dispose();
    await receiver.close();
  }
  result.goals = {
    wallPerDeliveryRatio: result.burst.totalMs / result.floor.totalMs,
    cpuPerDeliveryRatio: result.burst.cpuMsPerDelivery / result.floor.cpuMsPerDelivery,
  };
  // A goal missed is a verdict, not an invalid run: only lost or doubled deliveries are failures.
  result.goals.met = result.goals.wallPerDeliveryRatio <= 1.5;
  result.failures = failures;
  return result;
}

export function webhooksReport(r) {
  const f = (n, d = 0) =>
    Number(n).toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });
  return [
    "",
    "Webhooks (BENCH_ONLY=webhooks)",
    `  attempt → signed lesson.completed at the receiver: p50 ${f(r.latency.p50Ms)} ms, p99 ${f(r.latency.p99Ms)} ms, max ${f(r.latency.maxMs)} ms (${r.latency.samples} samples)`,
    `  burst: ${f(r.burst.deliveries)} deliveries (${f(r.settings.burstEvents)} events × ${r.settings.webhooks} webhooks) in ${f(r.burst.totalMs / 1000, 1)} s = ${f(r.burst.deliveriesPerSecond)}/s; received ${f(r.burst.requests)} requests, ${r.burst.duplicates} duplicates; D1: ${f(r.burst.d1.succeeded)} succeeded, ${f(r.burst.d1.attempts)} attempts, ${f(r.burst.d1.logged)} logged`,
    `  floor (bare signed POST): ${f(r.floor.deliveries)} in ${f(r.floor.totalMs / 1000, 1)} s = ${f(r.floor.deliveriesPerSecond)}/s`,
    `  per delivery: wall ${f(r.burst.totalMs / r.burst.deliveries, 3)} ms vs floor ${f(r.floor.totalMs / r.floor.deliveries, 3)} ms = ${f(r.goals.wallPerDeliveryRatio, 2)}× (goal ≤ 1.5×); workerd CPU ${f(r.burst.cpuMsPerDelivery, 3)} ms vs ${f(r.floor.cpuMsPerDelivery, 3)} ms = ${f(r.goals.cpuPerDeliveryRatio, 2)}×`,
    `  second burst, the API measured while it drains: ${f(r.burstWithApi.deliveries)} deliveries in ${f(r.burstWithApi.totalMs / 1000, 1)} s = ${f(r.burstWithApi.deliveriesPerSecond)}/s; ${r.burstWithApi.duplicates} duplicates; D1: ${f(r.burstWithApi.d1.succeeded)} succeeded, ${f(r.burstWithApi.d1.attempts)} attempts, ${f(r.burstWithApi.d1.logged)} logged`,
    `  API goals of the default bench against floors in the same workerd (through Miniflare's entry, as there), concurrency 1, rounds of 1 s windows (median of per-round ratios):`,
    ...[
      ["idle", r.burst.apiIdle],
      ["during the second burst", r.burst.apiDuringBurst],
    ].flatMap(([when, m]) => [
      `    ${when}, ${m.rounds} round(s)${m.rounds ? ":" : " (it ended before a round did; no verdict)"}`,
      ...m.goals
        .filter(() => m.rounds > 0)
        .map(
          (g) =>
            `      ${g.label}, by ${g.metric}: ${g.ratio === null ? "-" : f(g.ratio, 2)}× ${g.met ? "PASS" : "MISS"} (ours p50 ${g.p50 === null ? "-" : f(g.p50, 3)} ms, p99 ${g.p99 === null ? "-" : f(g.p99, 2)} ms; per round ${g.perRound.map((x) => f(x, 2)).join(" ")})`,
        ),
      ...(m.meAgainstOwnWorkerd
        ? [
            `      diagnostic: me vs a DO floor in a workerd of its own (p50 ${f(m.meAgainstOwnWorkerd.doOwnP50, 3)} ms): ${f(m.meAgainstOwnWorkerd.ratio, 2)}×`,
          ]
        : []),
    ]),
    `  goal (consumer's time per delivery ≤ 1.5× the floor's, nothing lost or sent twice): ${r.goals.met && !r.failures.length ? "met" : "NOT MET"}`,
    ...(r.failures.length ? [`  FAILED: ${r.failures.join("; ")}`] : []),
  ].join("\n");
}

export { median };
