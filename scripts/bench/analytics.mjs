// The analytics scenario of `npm run bench` (BENCH_ONLY=analytics): GET /api/institutions/{id}/analytics
// over 90 days for an institution of 10,000 members, through the Miniflare API (workerd, local D1).
//
// The dataset is written straight into D1 with SQL: 10,000 learners in 40 classes (a quarter also in
// one of 8 clubs), their CEFR levels in learner_stats, 20 courses, and 90 days of the per-institution
// activity rollup that every recording keeps (institution_activity_days): each member active on about
// 35 % of the days, in one course a day. The attempts table is then renamed away, so any read of it
// would fail the request: every measured answer is a 200 from the rollup alone. The worker runs behind
// the bench's D1 meter (scripts/bench/worker-wrappers.mjs), so each answer says how many D1 statements
// it ran (X-D1-Queries) and the rows they read (X-D1-Rows-Read).
//
// Three runs; each sends BENCH_ANALYTICS_REQUESTS requests one after another (concurrency 1) per
// variant — the whole institution by day, by week, and one class by day — and reports the median and
// p90 latency and req/s per variant; the summary is the median of the three runs.
//
//   BENCH_ANALYTICS_REQUESTS=10   requests per variant per run
//   BENCH_ANALYTICS_MEMBERS=10000 members of the institution

import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { linguaWorker } from "./datasets.mjs";
import { applyMigrations, median, requestJson, storageBase } from "./lib.mjs";
import { BENCH_TENANT, seedBenchTenant } from "./seed.mjs";

const REQUESTS = Number(process.env.BENCH_ANALYTICS_REQUESTS ?? 10);
const MEMBERS = Number(process.env.BENCH_ANALYTICS_MEMBERS ?? 10_000);
const DAYS = 90;
const RUNS = 3;
const INSTITUTION = BENCH_TENANT.institution.id;

function day(offset) {
  const today = new Date().toISOString().slice(0, 10);
  return new Date(Date.parse(`${today}T00:00:00Z`) + offset * 86_400_000).toISOString().slice(0, 10);
}

/** Seeds members, groups, CEFR levels, courses and 90 days of the rollup in a handful of SQL statements. */
async function seed(d1) {
  const from = day(1 - DAYS);
  const members = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${MEMBERS})`;
  const statements = [
    `${members} INSERT INTO users (id, email, name, role, institution_id, password_hash, status)
       SELECT printf('usr_bm_%05d', i), printf('m%05d@bench.lingua.test', i), printf('Member %05d', i),
              'learner', '${INSTITUTION}', 'pbkdf2-sha256$1$x$x', 'active' FROM n`,
    `${members} INSERT INTO member_groups (institution_id, user_id, group_name)
       SELECT '${INSTITUTION}', printf('usr_bm_%05d', i), printf('Class %02d', i % 40) FROM n`,
    `${members} INSERT INTO member_groups (institution_id, user_id, group_name)
       SELECT '${INSTITUTION}', printf('usr_bm_%05d', i), printf('Club %d', i % 8) FROM n WHERE i % 4 = 0`,
    `${members} INSERT INTO learner_stats (user_id, institution_id, xp_total, attempts, correct, seconds,
         items_completed, lessons_completed, courses_completed, perfect_lessons, current_streak, longest_streak,
         last_active_day, cefr_levels, updated_at)
       SELECT printf('usr_bm_%05d', i), '${INSTITUTION}', 100, 10, 8, 600, 5, 1, 0, 0, 1, 3, '${day(0)}',
              CASE WHEN i % 5 = 0 THEN '{}' ELSE json_object(
                'overall', json_extract('["A1","A2","B1","B2","C1","C2"]', '$[' || (i % 6) || ']'),
                'vocabulary', json_extract('["A1","A2","B1","B2","C1","C2"]', '$[' || ((i + 1) % 6) || ']'),
                'grammar', json_extract('["A1","A2","B1","B2","C1","C2"]', '$[' || ((i + 2) % 6) || ']')) END,
              '${day(0)}T00:00:00Z' FROM n`,
    `WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 20)
     INSERT INTO courses (id, slug, title, description, target_language, source_language, cefr_from, cefr_to, published)
       SELECT printf('crs_bm_%02d', i), printf('bench-course-%02d', i), printf('Bench course %02d', i), '', 'es', 'en', 'A1', 'B2', 1 FROM c`,
  ];
  for (const sql of statements) await d1.prepare(sql).run();
  // The rollup, ten days per statement (each ~35k rows).
  for (let start = 0; start < DAYS; start += 10) {
    await d1
      .prepare(
        `${members}, d(k) AS (SELECT ${start} UNION ALL SELECT k + 1 FROM d WHERE k < ${Math.min(start + 9, DAYS - 1)})
         INSERT INTO institution_activity_days
           (institution_id, day, user_id, course_id, attempts, seconds, xp, lessons_completed, courses_completed)
         SELECT '${INSTITUTION}', date('${from}', '+' || k || ' days'), printf('usr_bm_%05d', i),
                printf('crs_bm_%02d', 1 + (i * 7 + k) % 20), 1 + (i + k) % 12, 60 * (1 + (i + k) % 15),
                10 * (1 + (i + k) % 12), CASE WHEN (i + k) % 9 = 0 THEN 1 ELSE 0 END,
                CASE WHEN (i * 3 + k) % 211 = 0 THEN 1 ELSE 0 END
         FROM n, d WHERE (i * 37 + k * 11) % 100 < 35`,
      )
      .run();
  }
  const rows = await d1.prepare("SELECT count(*) AS n FROM institution_activity_days").first("n");
  await d1.prepare("ALTER TABLE attempts RENAME TO attempts_hidden").run();
  return { rollupRows: rows };
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function measure(url, headers) {
  const latencies = [];
  let last = null;
  let retries = 0;
  const started = performance.now();
  for (let i = 0; i < REQUESTS; i++) {
    let t = performance.now();
    let res;
    for (let attempt = 1; ; attempt++) {
      try {
        res = await fetch(url, { headers });
        break;
      } catch (error) {
        // The local server dropped the connection (seen under heavy machine load): again on a new
        // one after a pause, at most twice, not timed twice; the report counts these.
        const code = error?.cause?.code;
        if (attempt > 2 || (code !== "UND_ERR_SOCKET" && code !== "ECONNRESET")) throw error;
        retries += 1;
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        t = performance.now();
      }
    }
    const body = await res.text();
    latencies.push(performance.now() - t);
    if (res.status !== 200) throw new Error(`analytics answered ${res.status}: ${body.slice(0, 300)}`);
    last = { res, body };
  }
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    p50: median(latencies),
    p90: percentile(latencies, 90),
    rps: REQUESTS / elapsed,
    statements: Number(last.res.headers.get("X-D1-Queries")),
    rowsRead: Number(last.res.headers.get("X-D1-Rows-Read")),
    retries,
    answer: JSON.parse(last.body),
  };
}

export async function runAnalytics({ config, scriptPath }) {
  const storage = mkdtempSync(join(storageBase(), "lingua-bench-analytics-"));
  const mf = new Miniflare({
    ...linguaWorker(config, scriptPath, { wrapper: "meter" }),
    host: "127.0.0.1",
    port: 0,
    defaultPersistRoot: storage,
  });
  try {
    const base = new URL(await mf.ready);
    const d1 = await mf.getD1Database("DB");
    await applyMigrations(d1, config.migrationDirs.DB);
    const { token } = await seedBenchTenant({ d1, baseUrl: base, extraTokens: 0 });
    console.error(`bench: analytics: seeding ${MEMBERS.toLocaleString("en-US")} members and ${DAYS} days…`);
    const seeded = await seed(d1);
    const headers = { Authorization: `Bearer ${token}` };
    const range = `from=${day(1 - DAYS)}&to=${day(0)}`;
    const variants = [
      { id: "day", label: `${DAYS} days by day`, query: `${range}&granularity=day` },
      { id: "week", label: `${DAYS} days by week`, query: `${range}&granularity=week` },
      {
        id: "group",
        label: `${DAYS} days by day, one class`,
        query: `${range}&granularity=day&group=Class%2007`,
      },
    ];
    const path = `/api/institutions/${INSTITUTION}/analytics`;
    // Warm-up: the route group's first build and D1's page cache.
    for (const v of variants) await requestJson(new URL(`${path}?${v.query}`, base), { headers });
    const runs = [];
    for (let run = 0; run < RUNS; run++) {
      for (const v of variants) {
        const result = await measure(new URL(`${path}?${v.query}`, base), headers);
        console.error(
          `bench: analytics run ${run + 1}/${RUNS} ${v.label}: p50 ${result.p50.toFixed(0)} ms, ${result.statements} statements`,
        );
        runs.push({
          run,
          variant: v.id,
          label: v.label,
          ...result,
          answer: undefined,
          totals: result.answer.totals,
        });
      }
    }
    const summary = variants.map((v) => {
      const mine = runs.filter((r) => r.variant === v.id);
      return {
        variant: v.id,
        label: v.label,
        p50: median(mine.map((r) => r.p50)),
        p90: median(mine.map((r) => r.p90)),
        rps: median(mine.map((r) => r.rps)),
        statements: Math.max(...mine.map((r) => r.statements)),
        rowsRead: median(mine.map((r) => r.rowsRead)),
        retries: mine.reduce((sum, r) => sum + r.retries, 0),
        totals: mine[0].totals,
      };
    });
    const failures = summary
      .filter((s) => !(s.statements >= 1 && s.statements <= 3))
      .map((s) => `analytics ${s.label}: ${s.statements} D1 statements (at most 3)`);
    return { members: MEMBERS, days: DAYS, requests: REQUESTS, seeded, runs, summary, failures };
  } finally {
    await mf.dispose().catch(() => undefined);
    rmSync(storage, { recursive: true, force: true });
  }
}

export function analyticsReport(result, formatTable) {
  const lines = [
    "",
    `## Analytics: ${result.days} days, ${result.members.toLocaleString("en-US")} members (${result.seeded.rollupRows.toLocaleString("en-US")} rollup rows), attempts table renamed away`,
    `Medians of ${RUNS} runs of ${result.requests} sequential requests each (concurrency 1).`,
    "",
    formatTable(
      ["variant", "p50 ms", "p90 ms", "req/s", "D1 statements", "rows read", "active learners", "resent"],
      result.summary.map((s) => [
        s.label,
        s.p50.toFixed(1),
        s.p90.toFixed(1),
        s.rps.toFixed(1),
        String(s.statements),
        String(s.rowsRead),
        String(s.totals.active_learners),
        String(s.retries),
      ]),
    ),
  ];
  if (result.failures.length) lines.push("", ...result.failures.map((f) => `FAILED: ${f}`));
  return lines.join("\n");
}
