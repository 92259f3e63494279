import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { buildCourse, type Cefr, type CourseRowSet } from "../../scripts/catalog-data.mjs";
import worker from "../../src/index";
import { BASE } from "./api";

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

/** D1 binds at most 100 parameters per statement. */
function insertStatements(table: string, rows: Record<string, unknown>[]): D1PreparedStatement[] {
  if (rows.length === 0) return [];
  const columns = Object.keys(rows[0]!);
  const perStatement = Math.max(1, Math.floor(100 / columns.length));
  const out: D1PreparedStatement[] = [];
  for (let i = 0; i < rows.length; i += perStatement) {
    const chunk = rows.slice(i, i + perStatement);
    const tuple = `(${columns.map(() => "?").join(", ")})`;
    out.push(
      env.DB.prepare(
        `INSERT INTO ${table} (${columns.join(", ")}) VALUES ${chunk.map(() => tuple).join(", ")}`,
      ).bind(...chunk.flatMap((row) => columns.map((c) => row[c] ?? null))),
    );
  }
  return out;
}

/**
 * A course with its lessons, training blocks and items, inserted straight into this test file's D1
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
  await env.DB.batch([
    ...insertStatements("courses", [rows.course]),
    ...insertStatements("course_tags", rows.courseTags),
    ...insertStatements("lessons", rows.lessons),
    ...insertStatements("trainings", rows.trainings),
    ...insertStatements("training_items", rows.items),
  ]);
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
  const res = await worker.fetch(
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
