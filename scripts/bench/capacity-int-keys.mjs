// What integer keys ("numbers") for learners and catalogue rows would save in the tables kept for good
// (issue 35; docs/design/capacity.md, "Integer keys for learners and the catalogue"). An experiment, not a scenario of
// `npm run bench`: it builds item_progress, lesson_progress, daily_activity and
// institution_activity_days in a scratch SQLite file twice, as they are (the product's 30-character
// ids) and with integer keys, fills both with the same rows in the bench's order (day by day, learner
// by learner, 30 new items and one lesson a day), reads `dbstat`, and applies each table's saving per
// row to the rows of a BENCH_CAPACITY_LONG_IDS=1 run (.bench/results.json) to give what `fleetModel`
// would answer. Needs the Debian `sqlite3` shell.
//
//   node scripts/bench/capacity-int-keys.mjs [results.json]
//   INT_KEYS_LEARNERS=2000   learners (default 100, the bench's); more learners round pages less

import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fleetModel, GOAL } from "./capacity.mjs";

const LEARNERS = Number(process.env.INT_KEYS_LEARNERS ?? 100);
const DAYS = 7;
const ITEMS_A_DAY = 30;
/** The bench keeps the institution's id short (`ins_bench`) even with long ids; so does the baseline here. */
const INSTITUTION = "ins_bench";
/**
 * A 30-character id (the product's: a prefix and a ULID, src/platform/ids.ts) that sorts as the
 * bench's long ids do, in the order of `n`, so that rows land in the b-trees as in the bench's run.
 */
const longId = (prefix, n) => `printf('${prefix}_%026d', ${n})`;
/**
 * Numbers of the magnitude a fleet reaches: learners past a million (3 bytes in SQLite's record),
 * items past 32,767 (3 bytes), lessons and courses in the thousands (2 bytes).
 */
const FIRST_LEARNER = 1_000_000;
const FIRST_ITEM = 40_000;
const FIRST_LESSON = 9_000;
const COURSE_NUMBER = 700;

/** Each variant: its tables' DDL and the INSERT … SELECT from the scratch rows `r` (items) and `d` (days). */
const VARIANTS = {
  item_progress: {
    text: [
      "CREATE TABLE item_progress_text (user_id text NOT NULL, training_item_id text NOT NULL, best_score real NOT NULL, attempts integer NOT NULL, completed_at integer, last_attempt_at integer NOT NULL, PRIMARY KEY (user_id, training_item_id)) WITHOUT ROWID",
      "INSERT INTO item_progress_text SELECT uid, iid, score, 1, CASE WHEN score >= 0.5 THEN t END, t FROM r",
    ],
    numbers: [
      "CREATE TABLE item_progress_numbers (user_number integer NOT NULL, item_number integer NOT NULL, best_score real NOT NULL, attempts integer NOT NULL, completed_at integer, last_attempt_at integer NOT NULL, PRIMARY KEY (user_number, item_number)) WITHOUT ROWID",
      "INSERT INTO item_progress_numbers SELECT uno, ino, score, 1, CASE WHEN score >= 0.5 THEN t END, t FROM r",
    ],
  },
  lesson_progress: {
    text: [
      "CREATE TABLE lesson_progress_text (user_id text NOT NULL, lesson_id text NOT NULL, course_id text NOT NULL, items_done integer NOT NULL, items_total integer NOT NULL, score_sum real NOT NULL, status text NOT NULL, started_at text NOT NULL, completed_at text, last_activity_at text NOT NULL, PRIMARY KEY (user_id, lesson_id))",
      "CREATE INDEX lesson_progress_text_course ON lesson_progress_text (user_id, course_id)",
      "INSERT INTO lesson_progress_text SELECT uid, lid, cid, 30, 30, 24.5, 'completed', started, done, done FROM d",
    ],
    numbers: [
      "CREATE TABLE lesson_progress_numbers (user_number integer NOT NULL, lesson_number integer NOT NULL, course_number integer NOT NULL, items_done integer NOT NULL, items_total integer NOT NULL, score_sum real NOT NULL, status text NOT NULL, started_at text NOT NULL, completed_at text, last_activity_at text NOT NULL, PRIMARY KEY (user_number, lesson_number))",
      "CREATE INDEX lesson_progress_numbers_course ON lesson_progress_numbers (user_number, course_number)",
      "INSERT INTO lesson_progress_numbers SELECT uno, lno, cno, 30, 30, 24.5, 'completed', started, done, done FROM d",
    ],
  },
  daily_activity: {
    text: [
      "CREATE TABLE daily_activity_text (user_id text NOT NULL, day text NOT NULL, attempts integer NOT NULL, items_completed integer NOT NULL, correct integer NOT NULL, xp integer NOT NULL, seconds integer NOT NULL, PRIMARY KEY (user_id, day)) WITHOUT ROWID",
      "INSERT INTO daily_activity_text SELECT uid, day, 30, 24, 24, 300, 600 FROM d",
    ],
    numbers: [
      "CREATE TABLE daily_activity_numbers (user_number integer NOT NULL, day text NOT NULL, attempts integer NOT NULL, items_completed integer NOT NULL, correct integer NOT NULL, xp integer NOT NULL, seconds integer NOT NULL, PRIMARY KEY (user_number, day)) WITHOUT ROWID",
      "INSERT INTO daily_activity_numbers SELECT uno, day, 30, 24, 24, 300, 600 FROM d",
    ],
  },
  institution_activity_days: {
    text: [
      "CREATE TABLE institution_activity_days_text (institution_id text NOT NULL, day text NOT NULL, user_id text NOT NULL, course_id text NOT NULL, attempts integer NOT NULL, seconds integer NOT NULL, xp integer NOT NULL, lessons_completed integer NOT NULL, courses_completed integer NOT NULL, PRIMARY KEY (institution_id, user_id, day, course_id)) WITHOUT ROWID",
      "CREATE INDEX institution_activity_days_text_pair ON institution_activity_days_text (institution_id, user_id, course_id, day)",
      `INSERT INTO institution_activity_days_text SELECT '${INSTITUTION}', day, uid, cid, 30, 600, 300, 1, 0 FROM d`,
    ],
    numbers: [
      "CREATE TABLE institution_activity_days_numbers (institution_id text NOT NULL, day text NOT NULL, user_number integer NOT NULL, course_number integer NOT NULL, attempts integer NOT NULL, seconds integer NOT NULL, xp integer NOT NULL, lessons_completed integer NOT NULL, courses_completed integer NOT NULL, PRIMARY KEY (institution_id, user_number, day, course_number)) WITHOUT ROWID",
      "CREATE INDEX institution_activity_days_numbers_pair ON institution_activity_days_numbers (institution_id, user_number, course_number, day)",
      `INSERT INTO institution_activity_days_numbers SELECT '${INSTITUTION}', day, uno, cno, 30, 600, 300, 1, 0 FROM d`,
    ],
  },
};

/**
 * Levers beside the learners' and catalogue's numbers, measured on the same rows so that the note can
 * say what else would reach the goal: the institution's number too, the pair index gone, and
 * item_progress without the two columns no statement reads.
 */
const OTHER_LEVERS = {
  // Not a lever: the bench's institution id is 9 characters, the product's 30. A negative saving.
  "institution_activity_days as it is, the institution's id of 30 characters": [
    "institution_activity_days",
    [
      "CREATE TABLE iad_long_institution (institution_id text NOT NULL, day text NOT NULL, user_id text NOT NULL, course_id text NOT NULL, attempts integer NOT NULL, seconds integer NOT NULL, xp integer NOT NULL, lessons_completed integer NOT NULL, courses_completed integer NOT NULL, PRIMARY KEY (institution_id, user_id, day, course_id)) WITHOUT ROWID",
      "CREATE INDEX iad_long_institution_pair ON iad_long_institution (institution_id, user_id, course_id, day)",
      "INSERT INTO iad_long_institution SELECT 'ins_01JABCDEFGHJKMNPQRSTVWXYZ0', day, uid, cid, 30, 600, 300, 1, 0 FROM d",
    ],
  ],
  "institution_activity_days: the institution a number too": [
    "institution_activity_days",
    [
      "CREATE TABLE iad_institution_number (institution_number integer NOT NULL, day text NOT NULL, user_number integer NOT NULL, course_number integer NOT NULL, attempts integer NOT NULL, seconds integer NOT NULL, xp integer NOT NULL, lessons_completed integer NOT NULL, courses_completed integer NOT NULL, PRIMARY KEY (institution_number, user_number, day, course_number)) WITHOUT ROWID",
      "CREATE INDEX iad_institution_number_pair ON iad_institution_number (institution_number, user_number, course_number, day)",
      "INSERT INTO iad_institution_number SELECT 1200, day, uno, cno, 30, 600, 300, 1, 0 FROM d",
    ],
  ],
  "institution_activity_days: numbers, no pair index": [
    "institution_activity_days",
    [
      "CREATE TABLE iad_no_pair (institution_id text NOT NULL, day text NOT NULL, user_number integer NOT NULL, course_number integer NOT NULL, attempts integer NOT NULL, seconds integer NOT NULL, xp integer NOT NULL, lessons_completed integer NOT NULL, courses_completed integer NOT NULL, PRIMARY KEY (institution_id, user_number, day, course_number)) WITHOUT ROWID",
      `INSERT INTO iad_no_pair SELECT '${INSTITUTION}', day, uno, cno, 30, 600, 300, 1, 0 FROM d`,
    ],
  ],
  "institution_activity_days: the institution a number too, no pair index": [
    "institution_activity_days",
    [
      "CREATE TABLE iad_institution_number_no_pair (institution_number integer NOT NULL, day text NOT NULL, user_number integer NOT NULL, course_number integer NOT NULL, attempts integer NOT NULL, seconds integer NOT NULL, xp integer NOT NULL, lessons_completed integer NOT NULL, courses_completed integer NOT NULL, PRIMARY KEY (institution_number, user_number, day, course_number)) WITHOUT ROWID",
      "INSERT INTO iad_institution_number_no_pair SELECT 1200, day, uno, cno, 30, 600, 300, 1, 0 FROM d",
    ],
  ],
  "item_progress: numbers, without attempts and last_attempt_at": [
    "item_progress",
    [
      "CREATE TABLE item_progress_lean (user_number integer NOT NULL, item_number integer NOT NULL, best_score real NOT NULL, completed_at integer, PRIMARY KEY (user_number, item_number)) WITHOUT ROWID",
      "INSERT INTO item_progress_lean SELECT uno, ino, score, CASE WHEN score >= 0.5 THEN t END FROM r",
    ],
  ],
};

/**
 * Not levers: the bench's institution id is 9 characters (`ins_bench`), the product's 30. `attempts`
 * carries it in its row and its institution index; measured with both, on the same attempts (UUIDs).
 */
const ATTEMPTS_TABLE = (name) =>
  `CREATE TABLE ${name} (id text PRIMARY KEY NOT NULL, user_id text NOT NULL, institution_id text, training_item_id text NOT NULL, lesson_id text NOT NULL, course_id text NOT NULL, skill text NOT NULL, cefr_level text NOT NULL, score real NOT NULL, correct integer NOT NULL, duration_seconds integer NOT NULL, occurred_at text NOT NULL, local_day text NOT NULL, xp_awarded integer NOT NULL, recorded_at text NOT NULL) WITHOUT ROWID`;
const attemptsInsert = (name, institution) =>
  `INSERT INTO ${name} SELECT substr(aid, 1, 8) || '-' || substr(aid, 9, 4) || '-4' || substr(aid, 14, 3) || '-a' || substr(aid, 18, 3) || '-' || substr(aid, 21, 12), uid, '${institution}', iid, lid, (SELECT cid FROM course), 'reading', 'B1', score, score >= 0.5, 20, strftime('%Y-%m-%dT%H:%M:%SZ', t, 'unixepoch'), date(t, 'unixepoch'), 10, strftime('%Y-%m-%dT%H:%M:%SZ', t, 'unixepoch') FROM r`;
const INSTITUTION_ID_LENGTH = {
  short: [
    ATTEMPTS_TABLE("attempts_short_institution"),
    "CREATE INDEX attempts_short_institution_time ON attempts_short_institution (institution_id, occurred_at, id)",
    attemptsInsert("attempts_short_institution", INSTITUTION),
  ],
  long: [
    ATTEMPTS_TABLE("attempts_long_institution"),
    "CREATE INDEX attempts_long_institution_time ON attempts_long_institution (institution_id, occurred_at, id)",
    attemptsInsert("attempts_long_institution", "ins_01JABCDEFGHJKMNPQRSTVWXYZ0"),
  ],
};

/** An attempt's ordinal, hashed into a UUID's 32 hex digits: scattered as random UUIDs are, the same every run. */
const ATTEMPT = `((s.k * ${LEARNERS} + l.i) * ${ITEMS_A_DAY} + it.k % ${ITEMS_A_DAY} + 1)`;

/** The scratch rows, in the bench's order: `r` an item met (learner, day, item), `d` a learner-day. */
function scratchRows() {
  return [
    "PRAGMA page_size = 4096",
    "PRAGMA journal_mode = OFF",
    `CREATE TEMP TABLE learners AS WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${LEARNERS - 1}) SELECT i, ${longId("usr", "i")} AS uid, ${FIRST_LEARNER} + i * 3 AS uno FROM n`,
    `CREATE TEMP TABLE lessons AS WITH RECURSIVE n(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM n WHERE k < ${DAYS - 1}) SELECT k, ${longId("lsn", "k")} AS lid, ${FIRST_LESSON} + k AS lno FROM n`,
    `CREATE TEMP TABLE items AS WITH RECURSIVE n(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM n WHERE k < ${DAYS * ITEMS_A_DAY - 1}) SELECT k, k / ${ITEMS_A_DAY} AS lesson, ${longId("itm", "k")} AS iid, ${FIRST_ITEM} + k AS ino FROM n`,
    `CREATE TEMP TABLE course AS SELECT ${longId("crs", 0)} AS cid, ${COURSE_NUMBER} AS cno`,
    `CREATE TEMP TABLE r AS SELECT l.uid, l.uno, it.iid, it.ino, 1764547200 + s.k * 86400 + l.i AS t, ((l.i + it.k) % 5) / 4.0 AS score,
       s.lid, printf('%08x%08x%08x%08x', (${ATTEMPT} * 2654435761) % 4294967296, (${ATTEMPT} * 2246822519) % 4294967296,
         (${ATTEMPT} * 3266489917) % 4294967296, (${ATTEMPT} * 668265263) % 4294967296) AS aid
       FROM lessons s, learners l, items it WHERE it.lesson = s.k ORDER BY s.k, l.i, it.k`,
    `CREATE TEMP TABLE d AS SELECT l.uid, l.uno, s.lid, s.lno, c.cid, c.cno, date('2026-12-01', '+' || s.k || ' days') AS day,
       '2026-12-01T09:30:00Z' AS started, '2026-12-01T09:45:00Z' AS done
       FROM lessons s, learners l, course c ORDER BY s.k, l.i`,
  ];
}

function sqlite(file, sql, json = false) {
  return execFileSync("sqlite3", [...(json ? ["-json"] : []), file], {
    input: `${sql.join(";\n")};\n`,
    encoding: "utf8",
  });
}

function measure() {
  const dir = mkdtempSync(join(tmpdir(), "int-keys-"));
  const file = join(dir, "int-keys.sqlite");
  try {
    const ddl = [
      ...Object.values(VARIANTS).flatMap((v) => [...v.text, ...v.numbers]),
      ...Object.values(OTHER_LEVERS).flatMap(([, sql]) => sql),
      ...INSTITUTION_ID_LENGTH.short,
      ...INSTITUTION_ID_LENGTH.long,
    ];
    sqlite(file, [...scratchRows(), ...ddl]);
    const bytes = JSON.parse(
      sqlite(
        file,
        [
          "SELECT name, tbl_name AS tbl, sum(pgsize) AS bytes FROM dbstat JOIN sqlite_schema USING (name) GROUP BY name",
        ],
        true,
      ),
    );
    const tableBytes = (table) => bytes.filter((b) => b.tbl === table).reduce((s, b) => s + b.bytes, 0);
    const rowsOf = (table) => (table === "item_progress" ? LEARNERS * DAYS * ITEMS_A_DAY : LEARNERS * DAYS);
    const perRow = {};
    for (const table of Object.keys(VARIANTS))
      perRow[table] = {
        text: tableBytes(`${table}_text`) / rowsOf(table),
        numbers: tableBytes(`${table}_numbers`) / rowsOf(table),
      };
    const levers = {};
    for (const [name, [table, sql]] of Object.entries(OTHER_LEVERS)) {
      const created = /CREATE TABLE (\w+)/.exec(sql[0])[1];
      levers[name] = { table, perRow: tableBytes(created) / rowsOf(table) };
    }
    const attempts = LEARNERS * DAYS * ITEMS_A_DAY;
    const longInstitution = {
      attempts:
        (tableBytes("attempts_long_institution") - tableBytes("attempts_short_institution")) / attempts,
    };
    return { perRow, levers, longInstitution };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The bench's rows with each named table's bytes a row lowered by `saving[table]`, and fleetModel's answer. */
function fleetWith(capacity, saving) {
  const rows = capacity.model.rows.map((r) => {
    const s = saving[r.table];
    if (!s) return r;
    return { ...r, bytesPerRow: r.bytesPerRow - s, bytesPerUnit: r.bytesPerUnit - s * r.rowsPerUnit };
  });
  return fleetModel(rows, capacity.produced);
}

const resultsFile = process.argv[2] ?? ".bench/results.json";
const capacity = JSON.parse(readFileSync(resultsFile, "utf8")).capacity;
if (!capacity?.produced?.longIds)
  throw new Error(`${resultsFile}: run BENCH_CAPACITY_LONG_IDS=1 BENCH_ONLY=capacity npm run bench first`);
const { perRow, levers, longInstitution } = measure();
const kb = (b) => `${(b / 1000).toFixed(1)} KB`;
const line = (name, fleet) =>
  `${name.padEnd(72)} ${kb(fleet.withoutXapi).padStart(9)}  ${String(fleet.databasesWithoutXapi).padStart(3)} databases`;

console.log(
  `Bytes a row (table + indexes, dbstat), ${LEARNERS} learners × ${DAYS} days × ${ITEMS_A_DAY} items, 30-character ids:`,
);
for (const [table, v] of Object.entries(perRow))
  console.log(
    `  ${table.padEnd(28)} text ${v.text.toFixed(1).padStart(6)}  numbers ${v.numbers.toFixed(1).padStart(6)}  saves ${(v.text - v.numbers).toFixed(1)}`,
  );
for (const [name, l] of Object.entries(levers))
  console.log(
    `  ${name.padEnd(60)} ${l.perRow.toFixed(1).padStart(6)}  saves ${(perRow[l.table].text - l.perRow).toFixed(1)}`,
  );

const saving = (tables) => Object.fromEntries(tables.map((t) => [t, perRow[t].text - perRow[t].numbers]));
// In the order of what each saves a learner-year.
const all = ["item_progress", "institution_activity_days", "daily_activity", "lesson_progress"];
console.log(
  `\nfleetModel without xAPI forwarding (budget ${kb((GOAL.databases * 5e9) / GOAL.learners)}), the bench's long-id rows:`,
);
console.log(line("as measured by the bench", fleetWith(capacity, {})));
for (let n = 1; n <= all.length; n++)
  console.log(line(`numbers in ${all.slice(0, n).join(", ")}`, fleetWith(capacity, saving(all.slice(0, n)))));
for (const [name, l] of Object.entries(levers)) {
  const s = saving(all);
  s[l.table] = perRow[l.table].text - l.perRow;
  if (name.startsWith("institution_activity_days as it is"))
    console.log(line(name, fleetWith(capacity, { [l.table]: perRow[l.table].text - l.perRow })));
  else console.log(line(`numbers in all four; ${name}`, fleetWith(capacity, s)));
}
const leanest = saving(all);
for (const name of [
  "institution_activity_days: the institution a number too, no pair index",
  "item_progress: numbers, without attempts and last_attempt_at",
])
  leanest[levers[name].table] = perRow[levers[name].table].text - levers[name].perRow;
console.log(
  line(
    "numbers in all four; the institution a number, no pair index, item_progress lean",
    fleetWith(capacity, leanest),
  ),
);

// lesson_progress is read by the xAPI back-fill and delivery as well (src/domains/xapi): the sets
// without it, with the levers that would make up for it.
const withLevers = (tables, names) => {
  const s = saving(tables);
  for (const name of names) s[levers[name].table] = perRow[levers[name].table].text - levers[name].perRow;
  return s;
};
const threeTables = ["item_progress", "institution_activity_days", "daily_activity"];
const lean = "item_progress: numbers, without attempts and last_attempt_at";
const institutionNumber = "institution_activity_days: the institution a number too";
console.log(
  line(
    "numbers in three (not lesson_progress); item_progress lean",
    fleetWith(capacity, withLevers(threeTables, [lean])),
  ),
);
console.log(
  line(
    "numbers in three (not lesson_progress); item_progress lean, the institution a number",
    fleetWith(capacity, withLevers(threeTables, [lean, institutionNumber])),
  ),
);

// The product's institution ids (30 characters) where the bench has 9: what attempts and
// institution_activity_days then take on top of each set.
const longIad = levers["institution_activity_days as it is, the institution's id of 30 characters"];
const iadLongExtra = longIad.perRow - perRow.institution_activity_days.text;
console.log(
  `\nThe institution's id of 30 characters instead of 9: attempts + ${longInstitution.attempts.toFixed(1)} bytes a row, institution_activity_days + ${iadLongExtra.toFixed(1)} (as it is, and with numbers for learners and the catalogue).`,
);
const withLongInstitution = (s, iadToo) => ({
  ...s,
  attempts: -longInstitution.attempts,
  ...(iadToo ? { institution_activity_days: (s.institution_activity_days ?? 0) - iadLongExtra } : {}),
});
console.log(
  line("as it is, the institution's id of 30 characters", fleetWith(capacity, withLongInstitution({}, true))),
);
console.log(
  line(
    "numbers in all four, the institution's id of 30 characters",
    fleetWith(capacity, withLongInstitution(saving(all), true)),
  ),
);
console.log(
  line(
    "numbers in all four, the institution a number in institution_activity_days, its id of 30 characters in attempts",
    fleetWith(capacity, withLongInstitution(withLevers(all, [institutionNumber]), false)),
  ),
);
console.log(
  line(
    "numbers in three, item_progress lean, the institution a number, its id of 30 characters in attempts",
    fleetWith(capacity, withLongInstitution(withLevers(threeTables, [lean, institutionNumber]), false)),
  ),
);
console.log(
  line(
    "numbers in all four, item_progress lean, the institution a number, its id of 30 characters in attempts",
    fleetWith(capacity, withLongInstitution(withLevers(all, [lean, institutionNumber]), false)),
  ),
);
