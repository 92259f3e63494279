// Load generator, run as a separate process so the client never shares an event loop with the
// process that started the workers. Two ways to use it:
//
//   node scripts/bench/load.mjs '{"url":"http://127.0.0.1:1234/healthz","headers":{},"connections":16,"duration":8,"warmup":1.5}'
//     one run: an unrecorded warm-up, then the measured run; prints one JSON object on stdout.
//
//   node scripts/bench/load.mjs --serve
//     long-lived (what `npm run bench` uses, via lib.mjs startLoadGenerator): reads one JSON
//     request per line on stdin ({ id, url, ... } as above), runs them one after another and
//     answers each with one line { id, result } or { id, error }. One process for the whole bench
//     means every run uses an already-warm client, and no run pays a Node start.
//
// autocannon's own latency histogram has 1 ms resolution, too coarse for sub-millisecond routes, so
// every response time (a float in ms from process.hrtime) is also recorded here and the
// percentiles are computed from the exact samples.
import { createInterface } from "node:readline";
import autocannon from "autocannon";

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

/**
 * `rotateAuthorization`: a list of Authorization values sent in turn, one per request (several
 * tokens of one tenant sharing the load); otherwise every request sends `headers` as they are.
 */
function rotation(headers, rotateAuthorization) {
  if (!rotateAuthorization?.length) return undefined;
  let next = 0;
  return [
    {
      setupRequest(request) {
        const Authorization = rotateAuthorization[next++ % rotateAuthorization.length];
        return { ...request, headers: { ...headers, Authorization } };
      },
    },
  ];
}

function run({ url, method, headers, body, connections, rotateAuthorization }, seconds) {
  return new Promise((resolve, reject) => {
    const samples = [];
    const statusCounts = {};
    const startedAt = process.hrtime.bigint();
    const requests = rotation(headers, rotateAuthorization);
    const instance = autocannon(
      {
        url,
        method,
        headers,
        body,
        connections,
        pipelining: 1,
        duration: seconds,
        timeout: 10,
        ...(requests ? { requests } : {}),
      },
      (error, result) => {
        if (error) return reject(error);
        const elapsedS = Number(process.hrtime.bigint() - startedAt) / 1e9;
        resolve({ result, samples, statusCounts, elapsedS });
      },
    );
    instance.on("response", (_client, statusCode, _bytes, responseTimeMs) => {
      statusCounts[statusCode] = (statusCounts[statusCode] ?? 0) + 1;
      if (statusCode >= 200 && statusCode < 300) samples.push(responseTimeMs);
    });
  });
}

/** One measured run (after `warmup` unrecorded seconds, whose statuses are reported too). */
async function measure(config) {
  const {
    url,
    headers = {},
    connections = 1,
    duration = 8,
    warmup = 1.5,
    method = "GET",
    body,
    rotateAuthorization,
  } = config;
  if (!url) throw new Error("load.mjs: missing url");
  const request = { url, method, headers, body, connections, rotateAuthorization };
  let warmupStatusCounts = {};
  if (warmup > 0) warmupStatusCounts = (await run(request, warmup)).statusCounts;
  const { result, samples, statusCounts, elapsedS } = await run(request, duration);

  const sorted = Float64Array.from(samples).sort();
  const total = Object.values(statusCounts).reduce((a, b) => a + b, 0);
  const mean = sorted.length ? sorted.reduce((a, b) => a + b, 0) / sorted.length : null;

  return {
    url,
    connections,
    durationS: duration,
    warmupS: warmup,
    warmupStatusCounts,
    elapsedS,
    requests: total,
    ok2xx: sorted.length,
    statusCounts,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    // Completed 2xx responses per second over the measured run (autocannon's per-second average is kept below).
    rps: sorted.length / result.duration,
    latencyMs: {
      p50: percentile(sorted, 50),
      p90: percentile(sorted, 90),
      p99: percentile(sorted, 99),
      mean,
      min: sorted.length ? sorted[0] : null,
      max: sorted.length ? sorted[sorted.length - 1] : null,
    },
    autocannon: {
      duration: result.duration,
      requests: result.requests,
      latency: result.latency,
      throughput: result.throughput,
      "2xx": result["2xx"],
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
    },
  };
}

if (process.argv[2] === "--serve") {
  // Sequential on purpose: one run at a time, never two loads on the machine at once.
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    if (!line.trim()) continue;
    let id = null;
    try {
      const request = JSON.parse(line);
      id = request.id ?? null;
      const result = await measure(request);
      process.stdout.write(`${JSON.stringify({ id, result })}\n`);
    } catch (error) {
      process.stdout.write(`${JSON.stringify({ id, error: String(error?.stack ?? error) })}\n`);
    }
  }
} else {
  let config;
  try {
    config = JSON.parse(process.argv[2] ?? "{}");
  } catch {
    console.error("load.mjs: the argument must be JSON (or --serve)");
    process.exit(2);
  }
  if (!config.url) {
    console.error("load.mjs: missing url");
    process.exit(2);
  }
  process.stdout.write(`${JSON.stringify(await measure(config))}\n`);
}
