// BENCH_SSO_PROFILE (scripts/bench/sso.mjs): what each phase of an SSO sign-in costs Lingua's isolate.
// An entry module in front of the (unminified) bundle counts the D1 work of every HTTP request — round
// trips (a `run`/`all`/`first`/`raw`, or a `batch` of any size) and statements, per SQL text — and the
// bench reads and resets the counts between phases at `/__d1-statements`. The CPU profile is workerd's
// inspector, as scripts/bench/xapi-profile.mjs samples it.

/** The entry module: the bundle's worker with every request's `env.DB` (and its sessions) counted. */
export function d1RoundTripsEntry(bundle) {
  return `import worker from ${JSON.stringify(bundle)};
export * from ${JSON.stringify(bundle)};
let sums = new Map();
let roundTrips = 0;
const add = (sql, meta) => {
  const key = sql.replace(/\\s+/g, " ").slice(0, 140);
  const s = sums.get(key) ?? { statements: 0, ms: 0 };
  s.statements += 1;
  s.ms += meta?.duration ?? 0;
  sums.set(key, s);
};
const SQL = Symbol("sql");
const INNER = Symbol("inner");
const wrapStatement = (inner, sql) => ({
  [INNER]: inner,
  [SQL]: sql,
  bind: (...values) => wrapStatement(inner.bind(...values), sql),
  run: async () => { roundTrips++; const r = await inner.run(); add(sql, r.meta); return r; },
  all: async () => { roundTrips++; const r = await inner.all(); add(sql, r.meta); return r; },
  first: async (column) => { roundTrips++; const r = await inner.all(); add(sql, r.meta); const row = r.results[0] ?? null; return column === undefined ? row : (row?.[column] ?? null); },
  raw: async (options) => { roundTrips++; add(sql, null); return inner.raw(options); },
});
const wrapSession = (session) => ({
  prepare: (sql) => wrapStatement(session.prepare(sql), sql),
  batch: async (statements) => {
    roundTrips++;
    const results = await session.batch(statements.map((s) => s[INNER] ?? s));
    results.forEach((r, i) => add(statements[i][SQL] ?? "?", r.meta));
    return results;
  },
  getBookmark: () => session.getBookmark?.() ?? null,
  withSession: (start) => wrapSession(session.withSession(start)),
  exec: (sql) => session.exec(sql),
  dump: () => session.dump(),
});
const envs = new WeakMap();
const wrapped = (env) => { let e = envs.get(env); if (!e) { e = { ...env, DB: wrapSession(env.DB) }; envs.set(env, e); } return e; };
export default {
  ...worker,
  fetch(request, env, ctx) {
    if (new URL(request.url).pathname === "/__d1-statements") {
      const statements = [...sums.entries()].map(([sql, s]) => ({ sql, ...s })).sort((a, b) => b.statements - a.statements);
      const answer = { roundTrips, statements };
      sums = new Map();
      roundTrips = 0;
      return Response.json(answer);
    }
    return worker.fetch(request, wrapped(env), ctx);
  },
};
`;
}
