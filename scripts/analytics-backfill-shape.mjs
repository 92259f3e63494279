// The analytics' back-fill migration (…_backfill_institution_analytics) is written for the tables as
// they were then: institution_activity_days and lesson_progress by ids, rowid tables. To run it on a
// database of today (test/institutions/analytics.test.ts, the analytics bench), both are put back in
// that shape — lesson_progress with its rows' ids — the back-fill run, then the migrations since,
// which rebuild them as they are now (WITHOUT ROWID, on numbers) and create the triggers as they are.
// Pure: `migrations` is [{ name, queries }] in order (a file's name, its statements), as the tests'
// TEST_MIGRATIONS binding and the bench's reading of migrations/ give them.

/** The migrations after the back-fill that rebuild the two tables, by the end of their file names. */
export const MIGRATIONS_SINCE_BACKFILL = [
  "_institution_activity_days_without_rowid.sql",
  "_institution_activity_days_on_numbers.sql",
  "_lesson_progress_by_numbers.sql",
];

function formerDdl(migrations, names, table) {
  return migrations
    .filter((m) => names.test(m.name))
    .flatMap((m) => m.queries.filter((q) => new RegExp(`CREATE (TABLE|INDEX) \`${table}[\`_]`).test(q)));
}

/** The statements that put the two tables back in the shape the back-fill was written for. */
export function tablesAsBackfillWants(migrations) {
  const formerDays = formerDdl(migrations, /^00(13|34)_/, "institution_activity_days");
  const formerLessons = formerDdl(migrations, /^0001_/, "lesson_progress");
  if (formerDays.length !== 3 || formerLessons.length !== 2)
    throw new Error(
      "the former institution_activity_days and lesson_progress were not found in the migrations",
    );
  return [
    "DROP TABLE institution_activity_days",
    ...formerDays,
    `CREATE TABLE lesson_progress_by_ids AS SELECT u.id AS user_id, l.id AS lesson_id, c.id AS course_id,
      p.items_done, p.items_total, p.score_sum, p.status, p.started_at, p.completed_at, p.last_activity_at
      FROM lesson_progress p JOIN users u ON u.number = p.user_number JOIN lessons l ON l.number = p.lesson_number
      JOIN courses c ON c.number = p.course_number`,
    "DROP TABLE lesson_progress",
    ...formerLessons,
    "INSERT INTO lesson_progress SELECT * FROM lesson_progress_by_ids",
    "DROP TABLE lesson_progress_by_ids",
  ];
}

/** The queries of the migration whose file name ends with `suffix`. */
export function migrationNamed(migrations, suffix) {
  const found = migrations.find((m) => m.name.endsWith(suffix));
  if (!found) throw new Error(`migration ${suffix} not found`);
  return found.queries;
}
