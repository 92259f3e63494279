import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { asc, eq, getTableColumns } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { buildCourse, type Cefr, type CourseRowSet } from "../../scripts/catalog-data.mjs";
import { courses, courseTags, lessons, trainingItems, trainings } from "../../src/db/schema";
import { chunk, rowsPerStatement } from "../../src/platform/batch";
import { database } from "../../src/platform/db";
import { BASE, fetchWorker } from "./api";

let sequence = 0;

function unique(): string {
  sequence += 1;
  return `${Date.now().toString(36)}${sequence}${Math.random().toString(36).slice(2, 6)}`;
}

export interface CourseOptions {
  published?: boolean;
  lessons?: number;
  blocksPerLesson?: number;
  itemsPerBlock?: number;
  /** Target language, a BCP 47 tag. */
  language?: string;
  source?: string;
  from?: Cefr;
  to?: Cefr;
  title?: string;
  slug?: string;
  description?: string;
  tags?: string[];
  createdAt?: string;
  publishedAt?: string | null;
}

export interface CreatedCourse {
  id: string;
  slug: string;
  title: string;
  lessonIds: string[];
  trainingIds: string[];
  itemIds: string[];
  rows: CourseRowSet;
}

/**
 * The generator's rows (snake_case columns, JSON columns as text) as drizzle inserts of `table`, at
 * most 100 bound parameters per statement.
 */
function inserts(table: SQLiteTable, rows: Record<string, unknown>[]) {
  const columns = Object.entries(getTableColumns(table)).map(([key, column]) => ({ key, column }));
  const byName = new Map(columns.map((c) => [c.column.name, c]));
  const values = rows.map((row) =>
    Object.fromEntries(
      Object.entries(row).map(([name, value]) => {
        const target = byName.get(name);
        if (!target) throw new Error(`no column ${name} in the table`);
        const json = target.column.dataType === "json" && typeof value === "string";
        return [target.key, json ? JSON.parse(value) : value];
      }),
    ),
  );
  const width = Math.max(1, ...values.map((v) => Object.keys(v).length));
  return chunk(values, rowsPerStatement(width)).map((part) =>
    database(env.DB)
      .insert(table)
      .values(part as never),
  );
}

/**
 * A course with its lessons, training blocks and items, inserted through drizzle into this test file's D1
 * (built by the same generator as the demo catalogue, so content and counts are realistic and
 * consistent). Ids and slug are unique per call; tests never depend on the demo data.
 */
export async function createCourse(options: CourseOptions = {}): Promise<CreatedCourse> {
  const tag = unique();
  const published = options.published ?? true;
  const createdAt = options.createdAt ?? "2026-03-01T10:00:00Z";
  const rows = buildCourse({
    code: `test_${tag}`,
    slug: options.slug ?? `test-course-${tag}`,
    title: options.title ?? `Test course ${tag}`,
    description: options.description,
    language: options.language ?? "es",
    source: options.source ?? "en",
    from: options.from ?? "A1",
    to: options.to ?? options.from ?? "A2",
    published,
    createdAt,
    publishedAt: published ? (options.publishedAt ?? "2026-03-02T10:00:00Z") : null,
    tags: options.tags ?? [],
    lessons: options.lessons ?? 2,
    blocksPerLesson: options.blocksPerLesson ?? 2,
    itemsPerBlock: options.itemsPerBlock ?? 3,
    seed: sequence,
  });
  const [first, ...rest] = [
    ...inserts(courses, [rows.course]),
    ...inserts(courseTags, rows.courseTags),
    ...inserts(lessons, rows.lessons),
    ...inserts(trainings, rows.trainings),
    ...inserts(trainingItems, rows.items),
  ];
  if (first) await database(env.DB).batch([first, ...rest]);
  return {
    id: rows.course.id,
    slug: rows.course.slug,
    title: rows.course.title,
    lessonIds: rows.lessons.map((l) => l.id),
    trainingIds: rows.trainings.map((t) => t.id),
    itemIds: rows.items.map((i) => i.id),
    rows,
  };
}

/** Changes a course row behind the API's back (a title, the publication), through drizzle. */
export async function updateCourseRow(
  id: string,
  fields: Partial<Pick<typeof courses.$inferInsert, "title" | "published" | "publishedAt">>,
): Promise<void> {
  await database(env.DB).update(courses).set(fields).where(eq(courses.id, id));
}

/** The tags stored for a course in course_tags, in order. */
export async function courseTagsOf(courseId: string): Promise<string[]> {
  const rows = await database(env.DB)
    .select({ tag: courseTags.tag })
    .from(courseTags)
    .where(eq(courseTags.courseId, courseId))
    .orderBy(asc(courseTags.tag));
  return rows.map((r) => r.tag);
}

/**
 * A request without a token that also waits for the work the worker hands to `waitUntil` (the
 * edge-cache write), so that the next request sees the cache as a real client a moment later would.
 */
export async function callPublic(
  path: string,
  options: {
    ip: string;
    method?: string;
    headers?: Record<string, string>;
    bindings?: Partial<Cloudflare.Env>;
  },
): Promise<Response> {
  const headers = new Headers(options.headers);
  headers.set("CF-Connecting-IP", options.ip);
  const ctx = createExecutionContext();
  const bindings = options.bindings ? { ...env, ...options.bindings } : env;
  const res = await fetchWorker(
    new Request(new URL(path, BASE), { method: options.method ?? "GET", headers }),
    bindings,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return res;
}

/** A D1 binding that counts every use and fails it: proof that a request made no query at all. */
export function untouchableDatabase(): { db: D1Database; uses: () => number } {
  let uses = 0;
  const db = new Proxy({} as D1Database, {
    get(_target, property) {
      uses += 1;
      return () => {
        throw new Error(`D1 was used (${String(property)})`);
      };
    },
  });
  return { db, uses: () => uses };
}
