// CPU profiles for BENCH_XAPI_PROFILE (scripts/bench/xapi.mjs): workerd's isolates under Miniflare sampled
// through `inspectorPort` and the Chrome DevTools Protocol's Profiler over its WebSocket, and an entry
// module timing each D1 statement of the consumers. `summary()` names the functions that took the
// most samples, by self and by inclusive time.
import WebSocket from "ws";

/**
 * Starts sampling every isolate on Miniflare's inspector port (the worker, and Miniflare's own: D1,
 * Queues, Durable Objects run in workerd beside it) whose title matches `only`. `stop()` answers
 * { [title]: profile }.
 */
export async function startCpuProfiles(port, only = /./, intervalUs = 200) {
  const all = await (await fetch(`http://127.0.0.1:${port}/json`)).json();
  const targets = all.filter((t) => only.test(t.title ?? ""));
  const profilers = await Promise.all(targets.map((t) => startCpuProfile(t, intervalUs)));
  return {
    async stop() {
      const profiles = {};
      for (const [i, p] of profilers.entries()) profiles[targets[i].title || targets[i].id] = await p.stop();
      return profiles;
    },
  };
}

async function startCpuProfile(target, intervalUs) {
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  let next = 1;
  const waiting = new Map();
  ws.on("message", (data) => {
    const message = JSON.parse(String(data));
    if (message.id && waiting.has(message.id)) {
      waiting.get(message.id)(message);
      waiting.delete(message.id);
    }
  });
  const call = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = next++;
      waiting.set(id, (m) =>
        m.error ? reject(new Error(`${method}: ${m.error.message}`)) : resolve(m.result),
      );
      ws.send(JSON.stringify({ id, method, params }));
    });
  await call("Profiler.enable");
  await call("Profiler.setSamplingInterval", { interval: intervalUs });
  await call("Profiler.start");
  return {
    async stop() {
      const { profile } = await call("Profiler.stop");
      ws.close();
      return profile;
    },
  };
}

/**
 * Self and inclusive milliseconds on CPU per function (`name file:line`), the top `limit` of each: a
 * sample counts one interval (the gaps between samples are time the isolate did not run).
 */
export function summary(profile, limit = 40, intervalUs = 200) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const label = (n) => {
    const f = n.callFrame;
    const file = (f.url || "").split("/").pop();
    return `${f.functionName || "(anonymous)"} ${file}:${f.lineNumber + 1}`;
  };
  const self = new Map();
  const inclusive = new Map();
  const ms = intervalUs / 1000;
  let total = 0;
  profile.samples.forEach((id) => {
    total += ms;
    const node = nodes.get(id);
    self.set(label(node), (self.get(label(node)) ?? 0) + ms);
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const l = label(nodes.get(at));
      if (seen.has(l)) continue;
      seen.add(l);
      inclusive.set(l, (inclusive.get(l) ?? 0) + ms);
    }
  });
  const top = (m) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(
        ([l, ms]) => `${ms.toFixed(1).padStart(9)} ms ${((ms / total) * 100).toFixed(1).padStart(5)}%  ${l}`,
      );
  return { totalMs: total, self: top(self), inclusive: top(inclusive) };
}

/**
 * The entry module of a worker whose queue consumers' D1 statements are timed (BENCH_XAPI_PROFILE):
 * each statement's `meta.duration` (SQLite's own time, as the local D1 reports it), rows read and
 * written, summed per SQL text; `GET /__d1-statements` answers the sums and starts them again.
 */
export function d1StatementsEntry(bundle) {
  return `import worker from ${JSON.stringify(bundle)};
export * from ${JSON.stringify(bundle)};
let sums = new Map();
const add = (sql, meta) => {
  const key = sql.replace(/\\s+/g, " ").slice(0, 110);
  const s = sums.get(key) ?? { statements: 0, ms: 0, rowsRead: 0, rowsWritten: 0 };
  s.statements += 1;
  s.ms += meta?.duration ?? 0;
  s.rowsRead += meta?.rows_read ?? 0;
  s.rowsWritten += meta?.rows_written ?? 0;
  sums.set(key, s);
};
const SQL = Symbol("sql");
const INNER = Symbol("inner");
const wrapStatement = (inner, sql) => ({
  [INNER]: inner,
  [SQL]: sql,
  bind: (...values) => wrapStatement(inner.bind(...values), sql),
  run: async () => { const r = await inner.run(); add(sql, r.meta); return r; },
  all: async () => { const r = await inner.all(); add(sql, r.meta); return r; },
  first: async (column) => { const r = await inner.all(); add(sql, r.meta); const row = r.results[0] ?? null; return column === undefined ? row : (row?.[column] ?? null); },
  raw: (options) => inner.raw(options),
});
// The service context runs every query in a D1 session (withSession): its statements are timed too.
const wrapSession = (session) => ({
  prepare: (sql) => wrapStatement(session.prepare(sql), sql),
  batch: async (statements) => {
    const results = await session.batch(statements.map((s) => s[INNER] ?? s));
    results.forEach((r, i) => add(statements[i][SQL] ?? "?", r.meta));
    return results;
  },
  getBookmark: () => session.getBookmark?.() ?? null,
});
const wrapD1 = (d1) => ({
  ...wrapSession(d1),
  exec: (sql) => d1.exec(sql),
  dump: () => d1.dump(),
  withSession: (...args) => wrapSession(d1.withSession(...args)),
});
const envs = new WeakMap();
const wrapped = (env) => { let e = envs.get(env); if (!e) { e = { ...env, DB: wrapD1(env.DB) }; envs.set(env, e); } return e; };
export default {
  ...worker,
  fetch(request, env, ctx) {
    if (new URL(request.url).pathname === "/__d1-statements") {
      const out = [...sums.entries()].map(([sql, s]) => ({ sql, ...s })).sort((a, b) => b.ms - a.ms);
      sums = new Map();
      return Response.json(out);
    }
    return worker.fetch(request, env, ctx);
  },
  queue: (batch, env, ctx) => worker.queue(batch, wrapped(env), ctx),
};
`;
}
