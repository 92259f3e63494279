// The capacity scenario of `npm run bench` (BENCH_ONLY=capacity; issue 35): what one D1 database holds,
// measured, not estimated. A Lingua worker (workerd, local D1, Queues, R2) is given a course, learners
// and an institution with a webhook endpoint and an xAPI endpoint on loopback; every learner then
// practises BENCH_CAPACITY_ATTEMPTS items a day for BENCH_CAPACITY_DAYS days through the real write
// path (POST /api/progress/attempts, one request per learner and day), the consumers deliver every
// webhook and statement, and one activity export is generated. The worker is then stopped and SQLite's
// `dbstat` (the Debian `sqlite3` shell: `apt-get install sqlite3`; D1 itself does not offer dbstat)
// reads the database file: pages and bytes of every table and index, rows of every table. What grows
// with what (per learner-day, per member, per delivery, per export) is the division of those rows by
// the counts the scenario produced; docs/design/capacity.md builds the capacity model on them.
//
//   BENCH_CAPACITY_LEARNERS=100  learners of the institution
//   BENCH_CAPACITY_DAYS=7        days of activity (today and the days before)
//   BENCH_CAPACITY_ATTEMPTS=30   attempts per learner and day (one lesson of 30 items a day)
//   BENCH_CAPACITY_LONG_IDS=1    the institution, learners, course, lessons and items with ids as long as the product's
//                                (a prefix and a 26-character ULID: 30 characters) instead of short ones

import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { linguaOptions, migrateEveryDatabase, requestJson, startWorker } from "./lib.mjs";
import { BENCH_TENANT, seedBenchTenant } from "./seed.mjs";

const LEARNERS = Number(process.env.BENCH_CAPACITY_LEARNERS ?? 100);
const DAYS = Number(process.env.BENCH_CAPACITY_DAYS ?? 7);
const ATTEMPTS = Number(process.env.BENCH_CAPACITY_ATTEMPTS ?? 30);
/**
 * The product's ids are a prefix and a ULID (src/platform/ids.ts, `newId`): 30 characters. The short
 * ids of the default run keep its figures comparable across runs; BENCH_CAPACITY_LONG_IDS=1 measures
 * the rows with ids of the product's length, which every row that names a learner or an item carries.
 */
const LONG_IDS = process.env.BENCH_CAPACITY_LONG_IDS === "1";
const idOf = (short) =>
  LONG_IDS
    ? `${short.slice(0, 4)}${short.slice(4).replaceAll("_", "0").toUpperCase().padStart(26, "0")}`
    : short;
const COURSE = idOf("crs_cap");
/** The institution's id is on many rows (attempts, the analytics' rollups, the outbox): long too. */
const INSTITUTION = idOf(BENCH_TENANT.institution.id);
/** One lesson a day: enough lessons that no learner repeats one within the scenario. */
const LESSONS = DAYS;

/** What each table grows with; tables not named here are bounded (catalogue, settings, keys). */
const GROWS_WITH = {
  attempts: "learner-day",
  item_progress: "learner-day",
  lesson_progress: "learner-day",
  daily_activity: "learner-day",
  weekly_xp: "learner-day",
  institution_activity_days: "learner-day",
  outbox_events: "learner-day",
  // Internal events (attempts.recorded), apportioned from outbox_events by internalEvents() below.
  "outbox_events (internal)": "learner-day",
  xapi_statements: "learner-day",
  xapi_batches: "learner-day",
  xapi_statement_keys: "learner-day",
  institution_learner_courses: "learner",
  skill_evidence: "learner",
  study_time: "learner",
  course_progress: "learner",
  learner_stats: "learner",
  achievements: "learner",
  users: "learner",
  member_groups: "learner",
  webhook_deliveries: "delivery",
  webhook_delivery_attempts: "delivery",
  export_jobs: "export",
};

const ANSWER_200 = (res) => res.writeHead(200, { "content-type": "application/json" });

/** A loopback receiver for webhooks and a minimal LRS (answers every statement id). */
function startCounterpart() {
  const counts = { webhooks: 0, statements: 0 };
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      if (req.url.startsWith("/lrs/")) {
        const ids = JSON.parse(Buffer.concat(chunks).toString("utf8")).map((s) => s.id);
        counts.statements += ids.length;
        res
          .writeHead(200, { "content-type": "application/json", "x-experience-api-version": "1.0.3" })
          .end(JSON.stringify(ids));
        return;
      }
      counts.webhooks += 1;
      ANSWER_200(res).end("{}");
    });
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        counts,
        close: () => new Promise((r) => server.close(() => r())),
      }),
    ),
  );
}

function dayAt(offset) {
  const today = Date.parse(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`);
  // Mid-morning of the day: never in the future, whatever the hour the scenario runs.
  return new Date(Math.min(today + offset * 86_400_000 + 9 * 3_600_000, Date.now() - 60_000)).toISOString();
}

/** Learners, two groups each, and a course of LESSONS lessons of ATTEMPTS items, straight into D1. */
async function seed(d1) {
  const statements = [];
  const learners = Array.from({ length: LEARNERS }, (_, i) => idOf(`usr_cap_${String(i).padStart(5, "0")}`));
  for (const [i, id] of learners.entries()) {
    statements.push(
      d1
        .prepare(
          "INSERT INTO users (id, email, name, role, institution_id, password_hash) VALUES (?, ?, ?, 'learner', ?, 'x')",
        )
        .bind(id, `${id}@capacity.lingua.test`, `Learner ${i}`, INSTITUTION),
      d1
        .prepare(
          "INSERT INTO member_groups (institution_id, user_id, group_name) VALUES (?, ?, ?), (?, ?, ?)",
        )
        .bind(INSTITUTION, id, `Class ${i % 20}`, INSTITUTION, id, `Club ${i % 4}`),
    );
  }
  const items = LESSONS * ATTEMPTS;
  statements.push(
    d1
      .prepare(
        "INSERT INTO courses (id, slug, title, description, target_language, source_language, cefr_from, cefr_to, published, published_at, lesson_count, item_count, estimated_minutes, tags) VALUES (?, 'capacity', 'Spanish for beginners', 'Capacity course.', 'es', 'en', 'A1', 'A2', 1, ?, ?, ?, ?, '[]')",
      )
      .bind(COURSE, new Date().toISOString(), LESSONS, items, items),
  );
  const lessons = [];
  for (let l = 0; l < LESSONS; l++) {
    const lesson = idOf(`lsn_cap_${l}`);
    const training = idOf(`trn_cap_${l}`);
    const lessonItems = [];
    statements.push(
      d1
        .prepare(
          "INSERT INTO lessons (id, course_id, position, title, cefr_level, objectives, item_count, estimated_minutes) VALUES (?, ?, ?, ?, 'A1', '[]', ?, ?)",
        )
        .bind(lesson, COURSE, l + 1, `Lesson ${l + 1}`, ATTEMPTS, ATTEMPTS),
      d1
        .prepare(
          "INSERT INTO trainings (id, lesson_id, course_id, position, kind, title, item_count) VALUES (?, ?, ?, 1, 'practice', 'Practice', ?)",
        )
        .bind(training, lesson, COURSE, ATTEMPTS),
    );
    for (let i = 0; i < ATTEMPTS; i++) {
      const id = idOf(`itm_cap_${l}_${i}`);
      lessonItems.push(id);
      statements.push(
        d1
          .prepare(
            "INSERT INTO training_items (id, training_id, lesson_id, course_id, position, type, skill, cefr_level, xp, content) VALUES (?, ?, ?, ?, ?, 'vocabulary', ?, 'A1', 10, ?)",
          )
          .bind(
            id,
            training,
            lesson,
            COURSE,
            i + 1,
            ["reading", "listening", "writing", "speaking"][i % 4],
            JSON.stringify({ prompt: `Word ${l}.${i}?`, options: ["a", "b", "c"], answer: "a" }),
          ),
      );
    }
    lessons.push(lessonItems);
  }
  for (let i = 0; i < statements.length; i += 200) await d1.batch(statements.slice(i, i + 200));
  return { learners, lessons };
}

async function waitFor(predicate, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`capacity: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Nothing left for a consumer: every outbox event dispatched, no delivery or statement in flight. */
async function drained(d1) {
  const row = await d1
    .prepare(
      `SELECT (SELECT count(*) FROM outbox_events WHERE dispatched_at IS NULL)
            + (SELECT count(*) FROM webhook_deliveries WHERE status IN ('pending', 'retrying'))
            + (SELECT count(*) FROM xapi_statements WHERE status = 'pending')
            + (SELECT count(*) FROM xapi_batches WHERE log_status = 'pending') AS busy`,
    )
    .first();
  return row.busy === 0;
}

/** The D1 database file Miniflare persisted under `storage`. */
function databaseFile(storage) {
  const found = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".sqlite") && path.includes(`${join("d1", "")}`)) found.push(path);
    }
  };
  walk(join(storage, "d1"));
  // The biggest file is the application's database (Miniflare keeps a metadata database beside it).
  found.sort((a, b) => statSync(b).size - statSync(a).size);
  if (!found.length) throw new Error(`capacity: no D1 database file under ${storage}`);
  return found[0];
}

function sqlite(file, sql, { write = false } = {}) {
  const out = execFileSync("sqlite3", [...(write ? [] : ["-readonly"]), "-json", file, sql], {
    encoding: "utf8",
  });
  return out.trim() ? JSON.parse(out) : [];
}

/** The internal event types (src/platform/events.ts, INTERNAL_EVENT_TYPES), kept a day once dispatched. */
const INTERNAL_EVENT_TYPES = ["attempts.recorded"];

/**
 * Splits outbox_events in two rows of the model: the events kept 30 days and the internal ones, which
 * the sweep deletes a day after their dispatch. dbstat has no per-row figure, so a copy of the file
 * loses its internal events as the sweep would delete them (the pages they leave partly empty stay,
 * as in a database at steady state), and dbstat reads what the others take; the internal ones take
 * the difference.
 */
function internalEvents(file, measured) {
  const events = measured.tables.find((t) => t.table === "outbox_events");
  if (!events) return measured;
  const copy = join(tmpdir(), `lingua-capacity-${process.pid}.sqlite`);
  copyFileSync(file, copy);
  if (existsSync(`${file}-wal`)) copyFileSync(`${file}-wal`, `${copy}-wal`);
  try {
    const types = INTERNAL_EVENT_TYPES.map((t) => `'${t}'`).join(", ");
    sqlite(copy, `DELETE FROM outbox_events WHERE type IN (${types})`, { write: true });
    const kept = measure(copy).tables.find((t) => t.table === "outbox_events");
    const internal = {
      table: "outbox_events (internal)",
      rows: events.rows - kept.rows,
      tableBytes: events.tableBytes - kept.tableBytes,
      payload: events.payload - kept.payload,
      indexBytes: events.indexBytes - kept.indexBytes,
      indexes: events.indexes,
    };
    const tables = measured.tables.map((t) => (t === events ? kept : t));
    return { ...measured, tables: [...tables, internal] };
  } finally {
    rmSync(copy, { force: true });
    rmSync(`${copy}-wal`, { force: true });
  }
}

/** Bytes (pages × page size, and the payload within them) of every table with its indexes, and rows. */
function measure(file) {
  const objects = sqlite(
    file,
    "SELECT name, tbl_name AS tbl, type FROM sqlite_schema WHERE type IN ('table', 'index') AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'd1_%'",
  );
  const stats = new Map(
    sqlite(
      file,
      "SELECT name, count(*) AS pages, sum(pgsize) AS bytes, sum(payload) AS payload FROM dbstat GROUP BY name",
    ).map((r) => [r.name, r]),
  );
  const tables = new Map();
  for (const o of objects.filter((o) => o.type === "table")) {
    const s = stats.get(o.name) ?? { pages: 0, bytes: 0, payload: 0 };
    const rows = sqlite(file, `SELECT count(*) AS n FROM "${o.name}"`)[0].n;
    tables.set(o.name, {
      table: o.name,
      rows,
      tableBytes: s.bytes,
      payload: s.payload,
      indexBytes: 0,
      indexes: 0,
    });
  }
  for (const o of objects.filter((o) => o.type === "index")) {
    const t = tables.get(o.tbl);
    if (!t) continue;
    t.indexBytes += stats.get(o.name)?.bytes ?? 0;
    t.indexes += 1;
  }
  // Automatic indexes of UNIQUE / PRIMARY KEY constraints are named sqlite_autoindex_<table>_N.
  for (const [name, s] of stats) {
    const m = /^sqlite_autoindex_(.+)_\d+$/.exec(name);
    const t = m && tables.get(m[1]);
    if (!t) continue;
    t.indexBytes += s.bytes;
    t.indexes += 1;
  }
  const pageSize = sqlite(file, "PRAGMA page_size")[0].page_size;
  const pageCount = sqlite(file, "PRAGMA page_count")[0].page_count;
  return { tables: [...tables.values()], pageSize, fileBytes: pageSize * pageCount };
}

export async function runCapacity({ config, scriptPath, log = (m) => console.error(m) }) {
  try {
    execFileSync("sqlite3", ["-version"], { stdio: "ignore" });
  } catch {
    throw new Error("BENCH_ONLY=capacity needs the sqlite3 shell for dbstat: apt-get install sqlite3");
  }
  const counterpart = await startCounterpart();
  const lingua = await startWorker(linguaOptions(config, scriptPath));
  const produced = { learners: LEARNERS, days: DAYS, attemptsPerDay: ATTEMPTS, longIds: LONG_IDS };
  let file;
  try {
    const { d1 } = await migrateEveryDatabase(lingua.mf, config);
    const { token } = await seedBenchTenant({
      d1,
      baseUrl: lingua.url,
      extraTokens: 0,
      institutionId: INSTITUTION,
    });
    const auth = { Authorization: `Bearer ${token}` };
    const { learners, lessons } = await seed(d1);
    await requestJson(new URL("/api/integrations/webhooks", lingua.url), {
      method: "POST",
      headers: auth,
      body: { url: `${counterpart.url}/hooks`, events: ["*"] },
      expect: 201,
    });
    await requestJson(new URL("/api/integrations/xapi-endpoints", lingua.url), {
      method: "POST",
      headers: auth,
      body: {
        name: "Capacity LRS",
        endpoint: `${counterpart.url}/lrs/`,
        version: "1.0.3",
        auth: { type: "basic", username: "capacity", password: "capacity-secret" },
      },
      expect: 201,
    });

    log(`bench: capacity — ${LEARNERS} learners × ${DAYS} days × ${ATTEMPTS} attempts through the API…`);
    for (let day = 0; day < DAYS; day++) {
      const occurredAt = dayAt(day - DAYS + 1);
      for (let i = 0; i < learners.length; i += 4)
        await Promise.all(
          learners.slice(i, i + 4).map((userId) =>
            requestJson(new URL("/api/progress/attempts", lingua.url), {
              method: "POST",
              headers: auth,
              body: {
                user_id: userId,
                attempts: lessons[day].map((itemId, n) => ({
                  id: crypto.randomUUID(),
                  training_item_id: itemId,
                  score: n % 7 === 6 ? 0 : 1,
                  correct: n % 7 !== 6,
                  duration_seconds: 10 + (n % 30),
                  occurred_at: occurredAt,
                })),
              },
            }),
          ),
        );
      await waitFor(() => drained(d1), 180_000, `day ${day + 1}'s deliveries`);
    }
    const exported = await requestJson(new URL("/api/integrations/exports", lingua.url), {
      method: "POST",
      headers: auth,
      body: { type: "activity" },
      expect: 202,
    });
    await waitFor(
      async () =>
        (
          await requestJson(new URL(`/api/integrations/exports/${exported.body.id}`, lingua.url), {
            headers: auth,
          })
        ).body.status === "completed",
      120_000,
      "the export",
    );
    const deliveries = await d1.prepare("SELECT count(*) AS n FROM webhook_deliveries").first();
    produced.deliveries = deliveries.n;
    produced.webhooksReceived = counterpart.counts.webhooks;
    produced.statementsReceived = counterpart.counts.statements;
    produced.exports = 1;
    file = databaseFile(lingua.storage);
    // Stopped before reading, so every page is in the file and nothing writes while dbstat reads.
    await lingua.mf.dispose();
    const measured = internalEvents(file, measure(file));
    return { produced, ...measured, model: capacityModel(measured, produced) };
  } finally {
    await lingua.mf.dispose().catch(() => undefined);
    rmSync(lingua.storage, { recursive: true, force: true });
    await counterpart.close();
  }
}

/**
 * Rows the sweeps delete after a window (days): outbox events after 30 (their webhook deliveries and
 * attempts with them), internal events a day after their dispatch, xAPI statements (their keys, batches and own-state rows) after 90, weekly XP after 14. A
 * database holds at most that window's worth of them, whatever its age; the rest accumulate.
 */
export const RETAINED_DAYS = {
  outbox_events: 30,
  "outbox_events (internal)": 1,
  webhook_deliveries: 30,
  webhook_delivery_attempts: 30,
  xapi_statements: 90,
  xapi_batches: 90,
  xapi_statement_keys: 90,
  weekly_xp: 14,
};

/** Active days a year of the learner: 30 items a day on 250 days. */
export const ACTIVE_DAYS_A_YEAR = 250;
/** A database is planned to stay under half of D1's 10 GB. */
export const DATABASE_BUDGET_BYTES = 5e9;

/**
 * Bytes per unit of growth, split into what accumulates (attempts, progress, rollups) and what the
 * sweeps keep for a window only, and what fits in a database kept at half of D1's 10 GB: bytes of a
 * learner after a year = accumulating bytes per learner-day × 250 + per-learner bytes + the windowed
 * bytes of their last window (at most window × 250/365 active days).
 */
export function capacityModel({ tables }, produced) {
  const units = {
    "learner-day": produced.learners * produced.days,
    learner: produced.learners,
    delivery: produced.deliveries || 1,
    export: produced.exports,
  };
  const deliveriesPerLearnerDay = (produced.deliveries || 0) / units["learner-day"];
  const rows = [];
  const sums = { accumulating: 0, windowed: 0, learner: 0, export: 0, attempts: 0 };
  for (const t of tables) {
    const unit = GROWS_WITH[t.table];
    if (!unit) continue;
    const bytes = t.tableBytes + t.indexBytes;
    const perUnit = bytes / units[unit];
    // Deliveries are counted per learner-day through how many a learner-day caused.
    const perLearnerDay = unit === "delivery" ? perUnit * deliveriesPerLearnerDay : perUnit;
    const window = RETAINED_DAYS[t.table];
    if (unit === "learner") sums.learner += perUnit;
    else if (unit === "export") sums.export += perUnit;
    else if (window) sums.windowed += perLearnerDay * Math.min(window, 365) * (ACTIVE_DAYS_A_YEAR / 365);
    else sums.accumulating += perLearnerDay;
    if (t.table === "attempts") sums.attempts = perLearnerDay;
    rows.push({
      ...t,
      unit,
      window: window ?? null,
      rowsPerUnit: t.rows / units[unit],
      bytesPerRow: t.rows ? bytes / t.rows : 0,
      bytesPerUnit: perUnit,
    });
  }
  const perLearnerYear = sums.accumulating * ACTIVE_DAYS_A_YEAR + sums.learner + sums.windowed;
  return {
    rows,
    deliveriesPerLearnerDay,
    accumulatingPerLearnerDay: sums.accumulating,
    attemptsPerLearnerDay: sums.attempts,
    windowedPerLearner: sums.windowed,
    perLearner: sums.learner,
    perExport: sums.export,
    perLearnerYear,
    learnerYearsPerDatabase: DATABASE_BUDGET_BYTES / perLearnerYear,
    fleet: fleetModel(rows, produced),
  };
}

/** The goal of issue 35: this many learners active daily in at most this many databases under the budget. */
export const GOAL = { learners: 1_000_000, databases: 32 };
/** The fleet's ATTEMPTS_HOT_DAYS (docs/design/capacity.md): attempts stay in D1 this many days, then go to R2. */
export const FLEET_HOT_DAYS = Number(process.env.BENCH_CAPACITY_HOT_DAYS ?? 7);
/**
 * Distinct items a learner meets in a year. `item_progress` has a row per learner and item met, and
 * `lesson_progress` one per lesson met: they grow with these, not with days (the scenario meets 30 new
 * items every day, their upper bound).
 */
export const ITEMS_MET_A_YEAR = Number(process.env.BENCH_CAPACITY_ITEMS_A_YEAR ?? 1000);
/** Tables that only institutions with an xAPI endpoint fill. */
const XAPI_TABLES = new Set(["xapi_statements", "xapi_batches", "xapi_statement_keys"]);

/**
 * What one daily-active learner (250 active days a year) holds in D1 after a year, with attempts kept
 * FLEET_HOT_DAYS, item and lesson progress for ITEMS_MET_A_YEAR items, the per-day rollups for every
 * active day, the windowed logs at steady state, and the per-learner rows; then the databases under
 * DATABASE_BUDGET_BYTES that GOAL.learners such learners need, without and with xAPI forwarding.
 */
export function fleetModel(rows, produced) {
  const activeShare = ACTIVE_DAYS_A_YEAR / 365;
  const parts = { attempts: 0, progress: 0, rollups: 0, windowed: 0, xapi: 0, learner: 0 };
  const itemsPerLesson = produced.attemptsPerDay;
  for (const r of rows) {
    const perLearnerDay =
      r.unit === "delivery"
        ? r.bytesPerUnit * (produced.deliveries / (produced.learners * produced.days))
        : r.bytesPerUnit;
    if (r.unit === "learner") parts.learner += r.bytesPerUnit;
    else if (r.unit === "export") continue;
    else if (r.table === "attempts")
      parts.attempts = perLearnerDay * Math.min(FLEET_HOT_DAYS, 365) * activeShare;
    else if (r.table === "item_progress") parts.progress += r.bytesPerRow * ITEMS_MET_A_YEAR;
    else if (r.table === "lesson_progress")
      parts.progress += (r.bytesPerRow * ITEMS_MET_A_YEAR) / itemsPerLesson;
    else if (r.window)
      parts[XAPI_TABLES.has(r.table) ? "xapi" : "windowed"] +=
        perLearnerDay * Math.min(r.window, 365) * activeShare;
    else parts.rollups += perLearnerDay * ACTIVE_DAYS_A_YEAR;
  }
  const withoutXapi = parts.attempts + parts.progress + parts.rollups + parts.windowed + parts.learner;
  const withXapi = withoutXapi + parts.xapi;
  const databases = (bytes) => Math.ceil((GOAL.learners * bytes) / DATABASE_BUDGET_BYTES);
  return {
    hotDays: FLEET_HOT_DAYS,
    itemsMetAYear: ITEMS_MET_A_YEAR,
    parts,
    withoutXapi,
    withXapi,
    budgetPerLearner: (GOAL.databases * DATABASE_BUDGET_BYTES) / GOAL.learners,
    databasesWithoutXapi: databases(withoutXapi),
    databasesWithXapi: databases(withXapi),
  };
}

export function capacityReport(result, formatTable) {
  const p = result.produced;
  const m = result.model;
  const fmt = (n, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits });
  return [
    "",
    `## Capacity: ${p.learners} learners × ${p.days} days × ${p.attemptsPerDay} attempts (${fmt(p.learners * p.days * p.attemptsPerDay)} attempts), ${fmt(p.deliveries)} webhook deliveries (${fmt(p.webhooksReceived)} received), ${fmt(p.statementsReceived)} xAPI statements received, ${p.exports} export`,
    `Database file ${fmt(result.fileBytes / 1e6, 1)} MB (page size ${result.pageSize}); bytes are pages × page size from dbstat, a table's with its indexes; "window": days the sweeps keep its rows.`,
    "",
    formatTable(
      [
        "table",
        "grows per",
        "window",
        "rows",
        "rows / unit",
        "table bytes",
        "index bytes (n)",
        "bytes / row",
        "bytes / unit",
      ],
      m.rows
        .sort((a, b) => b.tableBytes + b.indexBytes - (a.tableBytes + a.indexBytes))
        .map((r) => [
          r.table,
          r.unit,
          r.window ? `${r.window} d` : "",
          fmt(r.rows),
          fmt(r.rowsPerUnit, 2),
          fmt(r.tableBytes),
          `${fmt(r.indexBytes)} (${r.indexes})`,
          fmt(r.bytesPerRow),
          fmt(r.bytesPerUnit),
        ]),
    ),
    "",
    `Accumulating per active learner-day: ${fmt(m.accumulatingPerLearnerDay)} bytes (attempts ${fmt(m.attemptsPerLearnerDay)}); windowed rows of one learner at steady state ${fmt(m.windowedPerLearner)} bytes (${fmt(m.deliveriesPerLearnerDay, 2)} webhook deliveries a learner-day); per learner ${fmt(m.perLearner)} bytes; per export ${fmt(m.perExport)} bytes.`,
    `A learner-year (${ACTIVE_DAYS_A_YEAR} active days): ${fmt(m.perLearnerYear / 1e6, 2)} MB; one database kept under ${DATABASE_BUDGET_BYTES / 1e9} GB holds ${fmt(m.learnerYearsPerDatabase)} learner-years.`,
    fleetReport(m.fleet, fmt),
  ].join("\n");
}

function fleetReport(f, fmt) {
  const kb = (n) => `${fmt(n / 1e3, 1)} KB`;
  const verdict = (n) => (n <= GOAL.databases ? "met" : "missed");
  return [
    `The goal (${fmt(GOAL.learners)} daily-active learners in at most ${GOAL.databases} databases under ${DATABASE_BUDGET_BYTES / 1e9} GB: ${kb(f.budgetPerLearner)} a learner), after a year, attempts hot ${f.hotDays} days (BENCH_CAPACITY_HOT_DAYS), ${fmt(f.itemsMetAYear)} items met (BENCH_CAPACITY_ITEMS_A_YEAR):`,
    `  attempts ${kb(f.parts.attempts)} + item and lesson progress ${kb(f.parts.progress)} + per-day rollups ${kb(f.parts.rollups)} + windowed logs ${kb(f.parts.windowed)} + per learner ${kb(f.parts.learner)} = ${kb(f.withoutXapi)} → ${fmt(f.databasesWithoutXapi)} databases (${verdict(f.databasesWithoutXapi)});`,
    `  with xAPI forwarding everywhere, + ${kb(f.parts.xapi)} = ${kb(f.withXapi)} → ${fmt(f.databasesWithXapi)} databases (${verdict(f.databasesWithXapi)}).`,
  ].join("\n");
}
