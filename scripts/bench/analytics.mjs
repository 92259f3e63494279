// The analytics scenario of `npm run bench` (BENCH_ONLY=analytics): GET /api/institutions/{id}/analytics
// for an institution of 10,000 members with a year of activity, and the recording (POST
// /api/progress/attempts) with and without the analytics' triggers, through the Miniflare API
// (workerd, local D1).
//
// The dataset is written straight into D1 with SQL: 10,000 learners in 40 classes (a quarter also in
// one of 8 clubs), their CEFR levels in learner_stats, 20 courses, and 366 days of attempts — each
// member active on about 35 % of the days, in their own course (one of 20), and every fifth member in
// a second course on a third of their days: one attempt per (learner, day, course). The back-fill
// migration (…_backfill_institution_analytics) then builds every rollup from those attempts, timed, on
// the tables in the shape it was written for, followed by the migrations since (see `backfill`);
// the attempts table is renamed away, so any read of it would fail the request: every measured answer
// is a 200 from the rollups alone. The worker runs behind the bench's D1 meter
// (scripts/bench/worker-wrappers.mjs), so each answer says how many D1 statements it ran
// (X-D1-Queries) and the rows they read (X-D1-Rows-Read).
//
// Reads: three runs; each sends BENCH_ANALYTICS_REQUESTS requests one after another (concurrency 1)
// per variant — 90 days by day and by week, 366 days by month, one class over 90 days by day — and the
// floors `/do` and `/d1` (scripts/bench/floor-worker.mjs, its own Miniflare) right before; the
// summary is the median of the three runs.
//
// Recording: the same database with the analytics' triggers and without them (dropped, then created
// again from the migration: the recording's code is the same either way, so without them it is the
// write path before the rollups). Alternating blocks of BENCH_ANALYTICS_RECORDINGS members not yet active
// today, each recorded twice (10 attempts each, as the institution's admin: the day's first recording,
// then a second); per round the ratio of mean
// latencies (with ÷ without), the median of the rounds decides.
//
//   BENCH_ANALYTICS_REQUESTS=10    requests per variant per run
//   BENCH_ANALYTICS_MEMBERS=10000  members of the institution
//   BENCH_ANALYTICS_RECORDINGS=40  recordings per block (3 rounds of with / without)

import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import {
  MIGRATIONS_SINCE_BACKFILL,
  migrationNamed,
  tablesAsBackfillWants,
} from "../analytics-backfill-shape.mjs";
import { linguaWorker } from "./datasets.mjs";
import { floorOptions, median, migrateEveryDatabase, requestJson, startWorker, storageBase } from "./lib.mjs";
import { BENCH_TENANT, seedBenchTenant } from "./seed.mjs";

const REQUESTS = Number(process.env.BENCH_ANALYTICS_REQUESTS ?? 10);
const MEMBERS = Number(process.env.BENCH_ANALYTICS_MEMBERS ?? 10_000);
const RECORDINGS = Number(process.env.BENCH_ANALYTICS_RECORDINGS ?? 40);
const DAYS = 366;
const RUNS = 3;
const INSTITUTION = BENCH_TENANT.institution.id;
const ITEMS = 10;

function day(offset) {
  const today = new Date().toISOString().slice(0, 10);
  return new Date(Date.parse(`${today}T00:00:00Z`) + offset * 86_400_000).toISOString().slice(0, 10);
}

/** Every migration file of `dir` in order, with its statements as the bench applies them. */
function readMigrations(dir) {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".sql"))
    .sort()
    .map((name) => ({
      name,
      queries: readFileSync(join(dir, name), "utf8")
        .split("--> statement-breakpoint")
        .map((sql) => sql.trim())
        .filter(Boolean),
    }));
}

/** Seeds members, groups, CEFR levels, courses (the first with items to record) and a year of attempts. */
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
    `INSERT INTO lessons (id, course_id, position, title, cefr_level, objectives, item_count, estimated_minutes)
       VALUES ('lsn_bm_1', 'crs_bm_01', 1, 'Greetings', 'A1', '[]', ${ITEMS}, ${ITEMS * 2})`,
    `INSERT INTO trainings (id, lesson_id, course_id, position, kind, title, item_count)
       VALUES ('trn_bm_1', 'lsn_bm_1', 'crs_bm_01', 1, 'practice', 'Block', ${ITEMS})`,
    `WITH RECURSIVE t(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM t WHERE i < ${ITEMS})
     INSERT INTO training_items (id, training_id, lesson_id, course_id, position, type, skill, cefr_level, xp, content)
       SELECT printf('itm_bm_%02d', i), 'trn_bm_1', 'lsn_bm_1', 'crs_bm_01', i, 'vocabulary', 'reading', 'A1', 10,
              json_object('prompt', 'Word ' || i, 'options', json_array('a', 'b'), 'answer', 'a') FROM t`,
  ];
  for (const sql of statements) await d1.prepare(sql).run();
  // A year of attempts, thirty days per statement: the member's own course every active day, a second
  // course for every fifth member on a third of their active days.
  for (let start = 0; start < DAYS; start += 30) {
    await d1
      .prepare(
        `${members}, d(k) AS (SELECT ${start} UNION ALL SELECT k + 1 FROM d WHERE k < ${Math.min(start + 29, DAYS - 1)}),
         active(i, k, c) AS (
           SELECT i, k, 1 + i % 20 FROM n, d WHERE (i * 37 + k * 11) % 100 < 35
           UNION ALL
           SELECT i, k, 1 + (i + 7) % 20 FROM n, d WHERE (i * 37 + k * 11) % 100 < 35 AND i % 5 = 0 AND (i + k) % 3 = 0)
         INSERT INTO attempts (id, user_id, institution_id, training_item_id, lesson_id, course_id, skill, cefr_level,
           score, correct, duration_seconds, occurred_at, local_day, xp_awarded, recorded_at)
         SELECT printf('att_bm_%05d_%03d_%02d', i, k, c), printf('usr_bm_%05d', i), '${INSTITUTION}', 'itm_bm_01',
                'lsn_bm_1', printf('crs_bm_%02d', c), 'reading', 'A1', 1, 1, 60 * (1 + (i + k) % 15),
                date('${from}', '+' || k || ' days') || 'T10:00:00Z', date('${from}', '+' || k || ' days'),
                10 * (1 + (i + k) % 12), date('${from}', '+' || k || ' days') || 'T10:00:01Z'
         FROM active`,
      )
      .run();
  }
  const attempts = await d1.prepare("SELECT count(*) AS n FROM attempts").first("n");
  return { attempts };
}

/**
 * Runs the back-fill migration over the seeded attempts, timed, as a deployment that had attempts
 * before the rollups did; then hides the attempts table. The back-fill is written for the tables as
 * they were then (institution_activity_days and lesson_progress by ids, rowid tables): both are put
 * back in that shape, the back-fill run, then the migrations since, which rebuild them as they are now
 * (WITHOUT ROWID, on numbers) and re-create the triggers as they are now — as
 * test/institutions/analytics.test.ts does on a small institution.
 */
async function backfill(d1, migrationsDir) {
  const started = performance.now();
  const migrations = readMigrations(migrationsDir);
  await d1.batch(tablesAsBackfillWants(migrations).map((sql) => d1.prepare(sql)));
  const slowest = [];
  for (const sql of [
    ...migrationNamed(migrations, "_backfill_institution_analytics.sql"),
    ...MIGRATIONS_SINCE_BACKFILL.flatMap((suffix) => migrationNamed(migrations, suffix)),
  ]) {
    const t = performance.now();
    await d1.prepare(sql).run();
    slowest.push({ ms: performance.now() - t, sql: sql.replace(/^(--[^\n]*\n)+/, "").slice(0, 400) });
  }
  slowest.sort((a, b) => b.ms - a.ms);
  for (const { ms, sql } of slowest.slice(0, 3))
    console.error(`bench: analytics: back-fill ${(ms / 1000).toFixed(1)} s: ${sql.replace(/\s+/g, " ")}…`);
  const backfillSeconds = (performance.now() - started) / 1000;
  const counts = {};
  for (const table of [
    "institution_activity_days",
    "institution_activity_totals",
    "institution_learner_courses",
    "institution_member_counts",
    "institution_cefr_counts",
    "institution_analytics_revisions",
  ])
    counts[table] = await d1.prepare(`SELECT count(*) AS n FROM ${table}`).first("n");
  // What the tables weigh (dbstat is not compiled into D1; the page count of the whole file is).
  const pages = await d1
    .prepare("PRAGMA page_count")
    .first("page_count")
    .catch(() => null);
  const pageSize = await d1
    .prepare("PRAGMA page_size")
    .first("page_size")
    .catch(() => null);
  await d1.prepare("ALTER TABLE attempts RENAME TO attempts_hidden").run();
  return { backfillSeconds, counts, databaseBytes: pages && pageSize ? pages * pageSize : null };
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

/** POST /api/progress/attempts: ten attempts for one member, as the admin; the latency in ms. */
async function record(base, headers, userId, items) {
  const occurredAt = new Date(Date.now() - 60_000).toISOString();
  const started = performance.now();
  const response = await fetch(new URL("/api/progress/attempts", base), {
    method: "POST",
    headers: { ...headers, "Content-Type": "application/json" },
    body: JSON.stringify({
      user_id: userId,
      attempts: items.map((id, i) => ({
        id: crypto.randomUUID(),
        training_item_id: id,
        score: 1,
        correct: true,
        duration_seconds: 20 + i,
        occurred_at: occurredAt,
      })),
    }),
  });
  const text = await response.text();
  const ms = performance.now() - started;
  if (response.status !== 200) throw new Error(`attempts answered ${response.status}: ${text.slice(0, 300)}`);
  return ms;
}

const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;

/**
 * The recording with and without the analytics' triggers, in alternating blocks: each request records
 * for a member not active today (their first activity of the day: the triggers' insert path).
 */
async function measureRecording(d1, base, headers) {
  await d1.prepare("ALTER TABLE attempts_hidden RENAME TO attempts").run();
  // The analytics' triggers as the migrations left them (each named …_rollups), to drop and create again.
  const { results } = await d1
    .prepare(
      "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%\\_rollups' ESCAPE '\\'",
    )
    .all();
  if (results.length === 0) throw new Error("no analytics trigger (…_rollups) in the database");
  const triggers = results.map((r) => r.sql);
  const names = results.map((r) => r.name);
  const idle = [];
  for (let i = 1; i <= MEMBERS; i++)
    if ((i * 37 + (DAYS - 1) * 11) % 100 >= 35) idle.push(`usr_bm_${String(i).padStart(5, "0")}`);
  const items = Array.from({ length: ITEMS }, (_, i) => `itm_bm_${String(i + 1).padStart(2, "0")}`);
  const set = async (on) => {
    if (on) for (const sql of triggers) await d1.prepare(sql).run();
    else for (const name of names) await d1.prepare(`DROP TRIGGER ${name}`).run();
  };
  // Warm-up, with the triggers.
  for (let i = 0; i < 5; i++) await record(base, headers, idle.shift(), items);
  const rounds = [];
  let on = true;
  for (let round = 0; round < RUNS; round++) {
    const block = {};
    for (const state of round % 2 === 0 ? [true, false] : [false, true]) {
      if (state !== on) {
        await set(state);
        on = state;
      }
      // Each member twice: the day's first recording (a new rollup row: the triggers' insert path),
      // then a second one (the same row incremented: the update path).
      const first = [];
      const second = [];
      for (let i = 0; i < RECORDINGS; i++) {
        const member = idle.shift();
        first.push(await record(base, headers, member, items));
        second.push(await record(base, headers, member, items));
      }
      const all = [...first, ...second].sort((a, b) => a - b);
      block[state ? "with" : "without"] = {
        mean: mean(all),
        p50: median(all),
        first: mean(first),
        second: mean(second),
      };
    }
    rounds.push({
      ...block,
      ratio: block.with.mean / block.without.mean,
      firstRatio: block.with.first / block.without.first,
      secondRatio: block.with.second / block.without.second,
    });
    console.error(
      `bench: analytics recording round ${round + 1}/${RUNS}: mean ${block.with.mean.toFixed(1)} ms with the triggers, ${block.without.mean.toFixed(1)} ms without (${block.with.mean / block.without.mean > 1 ? "+" : ""}${((block.with.mean / block.without.mean - 1) * 100).toFixed(1)} %)`,
    );
  }
  if (!on) await set(true);
  return {
    rounds,
    ratio: median(rounds.map((r) => r.ratio)),
    firstRatio: median(rounds.map((r) => r.firstRatio)),
    secondRatio: median(rounds.map((r) => r.secondRatio)),
    recordings: RECORDINGS,
    items: ITEMS,
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
  const floor = await startWorker(floorOptions(config));
  try {
    const base = new URL(await mf.ready);
    const { d1 } = await migrateEveryDatabase(mf, config);
    const { token } = await seedBenchTenant({ d1, baseUrl: base, extraTokens: 0 });
    console.error(
      `bench: analytics: seeding ${MEMBERS.toLocaleString("en-US")} members and ${DAYS} days of attempts…`,
    );
    const seeded = await seed(d1);
    console.error(
      `bench: analytics: back-filling the rollups from ${seeded.attempts.toLocaleString("en-US")} attempts…`,
    );
    Object.assign(seeded, await backfill(d1, config.migrationDirs.DB));
    console.error(`bench: analytics: back-fill took ${seeded.backfillSeconds.toFixed(1)} s`);
    const headers = { Authorization: `Bearer ${token}` };
    const quarter = `from=${day(-89)}&to=${day(0)}`;
    const variants = [
      { id: "day", label: "90 days by day", query: `${quarter}&granularity=day`, goal: 100 },
      { id: "week", label: "90 days by week", query: `${quarter}&granularity=week`, goal: 100 },
      {
        id: "month",
        label: "366 days by month",
        query: `from=${day(1 - DAYS)}&to=${day(0)}&granularity=month`,
        goal: 100,
      },
      {
        id: "group",
        label: "90 days by day, one class",
        query: `${quarter}&granularity=day&group=Class%2007`,
        goal: 75,
      },
    ];
    const path = `/api/institutions/${INSTITUTION}/analytics`;
    const floors = [
      { id: "do", label: "floor /do", url: new URL("/do", floor.url) },
      { id: "d1", label: "floor /d1", url: new URL("/d1", floor.url) },
    ];
    // Warm-up: the route group's first build, D1's page cache, the floors.
    for (const v of variants) await requestJson(new URL(`${path}?${v.query}`, base), { headers });
    for (const f of floors) await fetch(f.url).then((r) => r.arrayBuffer());
    const runs = [];
    for (let run = 0; run < RUNS; run++) {
      for (const f of floors) {
        const result = await measure(f.url, {});
        runs.push({ run, variant: f.id, label: f.label, ...result, answer: undefined });
      }
      for (const v of variants) {
        const result = await measure(new URL(`${path}?${v.query}`, base), headers);
        console.error(
          `bench: analytics run ${run + 1}/${RUNS} ${v.label}: p50 ${result.p50.toFixed(0)} ms, ${result.statements} statements, ${result.rowsRead} rows read`,
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
    const summarise = (v) => {
      const mine = runs.filter((r) => r.variant === v.id);
      return {
        variant: v.id,
        label: v.label,
        goal: v.goal ?? null,
        p50: median(mine.map((r) => r.p50)),
        p90: median(mine.map((r) => r.p90)),
        rps: median(mine.map((r) => r.rps)),
        statements: Math.max(...mine.map((r) => r.statements || 0)),
        rowsRead: median(mine.map((r) => r.rowsRead || 0)),
        retries: mine.reduce((sum, r) => sum + r.retries, 0),
        totals: mine[0].totals ?? null,
      };
    };
    const summary = [...floors.map(summarise), ...variants.map(summarise)];
    console.error("bench: analytics: recording with and without the triggers…");
    const recording = await measureRecording(d1, base, headers);
    const failures = [];
    for (const s of summary.filter((x) => x.goal !== null)) {
      if (!(s.statements >= 1 && s.statements <= 3))
        failures.push(`analytics ${s.label}: ${s.statements} D1 statements (at most 3)`);
      if (s.p50 > s.goal)
        failures.push(`analytics ${s.label}: p50 ${s.p50.toFixed(1)} ms (goal ≤ ${s.goal} ms)`);
      if (s.variant !== "group" && s.rowsRead > 30_000)
        failures.push(`analytics ${s.label}: ${s.rowsRead} rows read (goal ≤ 30,000)`);
    }
    if (recording.ratio > 1.1)
      failures.push(
        `analytics recording: ${recording.ratio.toFixed(3)}× without the triggers (goal ≤ 1.10×)`,
      );
    return { members: MEMBERS, days: DAYS, requests: REQUESTS, seeded, runs, summary, recording, failures };
  } finally {
    await mf.dispose().catch(() => undefined);
    await floor.dispose().catch(() => undefined);
    rmSync(storage, { recursive: true, force: true });
  }
}

export function analyticsReport(result, formatTable) {
  const s = result.seeded;
  const lines = [
    "",
    `## Analytics: ${result.members.toLocaleString("en-US")} members, ${result.days} days (${s.attempts.toLocaleString("en-US")} attempts; back-fill ${s.backfillSeconds.toFixed(1)} s), attempts table renamed away`,
    `Rollups: ${Object.entries(s.counts)
      .map(([table, n]) => `${table} ${n.toLocaleString("en-US")}`)
      .join(", ")}${s.databaseBytes ? `; database ${(s.databaseBytes / 1e6).toFixed(0)} MB` : ""}.`,
    `Medians of ${RUNS} runs of ${result.requests} sequential requests each (concurrency 1), floors measured right before in each run.`,
    "",
    formatTable(
      ["request", "p50 ms", "p90 ms", "req/s", "D1 statements", "rows read", "active learners", "resent"],
      result.summary.map((x) => [
        x.label,
        x.p50.toFixed(1),
        x.p90.toFixed(1),
        x.rps.toFixed(1),
        x.totals ? String(x.statements) : "",
        x.totals ? String(x.rowsRead) : "",
        x.totals ? String(x.totals.active_learners) : "",
        String(x.retries),
      ]),
    ),
    "",
    `Recording (POST /api/progress/attempts, ${result.recording.items} attempts, ${result.recording.recordings} per block), mean ms with / without the triggers per round: ${result.recording.rounds
      .map((r) => `${r.with.mean.toFixed(1)} / ${r.without.mean.toFixed(1)} (${r.ratio.toFixed(3)}×)`)
      .join(
        ", ",
      )}; median ratio ${result.recording.ratio.toFixed(3)}× (a member's first recording of the day ${result.recording.firstRatio.toFixed(3)}×, the second ${result.recording.secondRatio.toFixed(3)}×).`,
  ];
  if (result.failures.length) lines.push("", ...result.failures.map((f) => `FAILED: ${f}`));
  return lines.join("\n");
}
