import { and, asc, count, eq, inArray, type SQL, sql } from "drizzle-orm";
import type { SQLiteUpdateSetSource } from "drizzle-orm/sqlite-core";
import {
  type CefrLevel,
  courses,
  courseTags,
  type ItemType,
  lessons,
  type Skill,
  trainingItems,
  trainings,
} from "../../db/schema";
import type { Env } from "../../env";
import type { Principal } from "../../platform/auth/principal";
import { type Database, d1Binding, database } from "../../platform/db";
import { ApiError } from "../../platform/errors";
import { type PageRequest, pageBounds } from "../../platform/http/pagination";
import { nowIso } from "../../platform/ids";
import type { CourseRow, LessonOutlineRow, LessonRow, TrainingItemRow, TrainingRow } from "./present";
import { type CourseSort, canonicalLanguageTag } from "./schemas";

/**
 * Who sees unpublished courses (and their lessons, blocks and items): platform staff, i.e. a token
 * holding `content:write` (an ability only the platform_admin role can hold). For everybody else a
 * draft does not exist: it is missing from every list and its id answers 404.
 */
export function seesDrafts(principal: Principal): boolean {
  return principal.token.abilities.includes("content:write");
}

export interface PageResult<T> {
  total: number;
  rows: T[];
}

const EMPTY: PageResult<never> = { total: 0, rows: [] };

// ---------------------------------------------------------------------------------------------
// Courses

export interface CourseFilters {
  language?: string;
  level?: CefrLevel;
  q?: string;
  tag?: string;
  sort: CourseSort;
  /** Only on the authenticated list. */
  published?: boolean;
}

/** `%`, `_` and `\` match themselves. */
function likeContains(text: string): string {
  return `%${text.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
}

const published = eq(courses.published, true);
/** The ids of published courses, for the tables below a course (each carries `course_id`). */
const publishedCourseIds = (db: Database) => db.select({ id: courses.id }).from(courses).where(published);

/**
 * The course lists' statement, plain SQL built once per shape (which filters are present, the sort
 * and whether drafts are visible) and kept for the isolate: the page with the total of the whole
 * result on each row (a window count), read as arrays. Cheaper per request than building it with
 * the query builder and mapping its rows, and the list is the most read route there is.
 */
const COURSE_COLUMNS = [
  "id",
  "slug",
  "title",
  "description",
  "target_language",
  "source_language",
  "cefr_from",
  "cefr_to",
  "published",
  "published_at",
  "lesson_count",
  "item_count",
  "estimated_minutes",
  "tags",
  "created_at",
  "updated_at",
] as const;

const COURSE_ORDER: Record<CourseSort, string> = {
  title: "title COLLATE NOCASE ASC, id ASC",
  "-title": "title COLLATE NOCASE DESC, id DESC",
  created_at: "created_at ASC, id ASC",
  "-created_at": "created_at DESC, id DESC",
  // Unpublished courses (no published_at) last in both directions.
  published_at: "published_at ASC NULLS LAST, id ASC",
  "-published_at": "published_at DESC NULLS LAST, id DESC",
};

type CourseParam = "language" | "level" | "q" | "tag";

interface CourseStatement {
  page: string;
  count: string;
  /** The filters, bound as ?1, ?2, … in this order; the page statement then takes limit and offset. */
  params: CourseParam[];
}

const courseStatements = new Map<string, CourseStatement>();

/** `null` when the combination can match nothing (a non-staff caller asking for drafts). */
function courseStatement(filters: CourseFilters, includeDrafts: boolean): CourseStatement | null {
  let visibility: "published" | "drafts" | "all";
  if (filters.published === false) {
    if (!includeDrafts) return null;
    visibility = "drafts";
  } else {
    visibility = filters.published === true || !includeDrafts ? "published" : "all";
  }
  const present = (["language", "level", "q", "tag"] as const).filter((name) => filters[name] !== undefined);
  const key = `${visibility}|${present.join(",")}|${filters.sort}`;
  let statement = courseStatements.get(key);
  if (statement) return statement;

  const where: string[] = [];
  if (visibility !== "all") where.push(`published = ${visibility === "published" ? 1 : 0}`);
  present.forEach((name, index) => {
    const at = `?${index + 1}`;
    switch (name) {
      case "language":
        where.push(`target_language = ${at}`);
        break;
      case "level":
        where.push(`cefr_from <= ${at} AND cefr_to >= ${at}`); // A1 < A2 < … < C2 as text
        break;
      case "q":
        where.push(`title LIKE ${at} ESCAPE '\\'`);
        break;
      case "tag":
        where.push(`EXISTS (SELECT 1 FROM course_tags t WHERE t.course_id = courses.id AND t.tag = ${at})`);
        break;
    }
  });
  const whereSql = where.length > 0 ? ` WHERE ${where.join(" AND ")}` : "";
  statement = {
    page: `SELECT ${COURSE_COLUMNS.join(", ")}, count(*) OVER () AS total FROM courses${whereSql} ORDER BY ${COURSE_ORDER[filters.sort]} LIMIT ?${present.length + 1} OFFSET ?${present.length + 2}`,
    count: `SELECT count(*) AS total FROM courses${whereSql}`,
    params: present,
  };
  courseStatements.set(key, statement);
  return statement;
}

function courseParamValue(filters: CourseFilters, name: CourseParam): string {
  switch (name) {
    case "language":
      return canonicalLanguageTag(filters.language!);
    case "q":
      return likeContains(filters.q!);
    default:
      return filters[name]!;
  }
}

function courseFromColumns(r: unknown[]): CourseRow {
  return {
    id: r[0] as string,
    slug: r[1] as string,
    title: r[2] as string,
    description: r[3] as string,
    targetLanguage: r[4] as string,
    sourceLanguage: r[5] as string,
    cefrFrom: r[6] as CefrLevel,
    cefrTo: r[7] as CefrLevel,
    published: r[8] === 1,
    publishedAt: r[9] as string | null,
    lessonCount: r[10] as number,
    itemCount: r[11] as number,
    estimatedMinutes: r[12] as number,
    tags: JSON.parse(r[13] as string) as string[],
    createdAt: r[14] as string,
    updatedAt: r[15] as string,
  };
}

/** One D1 statement: the page, each row carrying the total (a separate count only past the last page). */
export async function listCourses(
  env: Env,
  filters: CourseFilters,
  page: PageRequest,
  includeDrafts: boolean,
): Promise<PageResult<CourseRow>> {
  const statement = courseStatement(filters, includeDrafts);
  if (!statement) return EMPTY;
  const d1 = d1Binding(env.DB);
  const { limit, offset } = pageBounds(page);
  const params = statement.params.map((name) => courseParamValue(filters, name));
  const rows = await d1
    .prepare(statement.page)
    .bind(...params, limit, offset)
    .raw();
  if (rows.length > 0 || offset === 0)
    return {
      total: (rows[0]?.[COURSE_COLUMNS.length] as number | undefined) ?? 0,
      rows: rows.map(courseFromColumns),
    };
  // Past the last page there is no row to carry the total: count separately (rare).
  const total = await d1
    .prepare(statement.count)
    .bind(...params)
    .first<number>("total");
  return { total: total ?? 0, rows: [] };
}

const outlineColumns = {
  id: lessons.id,
  position: lessons.position,
  title: lessons.title,
  cefrLevel: lessons.cefrLevel,
  itemCount: lessons.itemCount,
  estimatedMinutes: lessons.estimatedMinutes,
  objectives: lessons.objectives,
};

/** A course and its lesson outline in one batch; 404 when it is missing or a draft the caller may not see. */
async function courseWithOutline(
  env: Env,
  by: SQL,
  includeDrafts: boolean,
  notFound: string,
): Promise<{ course: CourseRow; outline: LessonOutlineRow[] }> {
  const db = database(env.DB);
  const where = includeDrafts ? by : and(by, published);
  const [found, outline] = await db.batch([
    db.select().from(courses).where(where).limit(1),
    db
      .select(outlineColumns)
      .from(lessons)
      .where(inArray(lessons.courseId, db.select({ id: courses.id }).from(courses).where(where)))
      .orderBy(asc(lessons.position)),
  ]);
  const course = found[0];
  if (!course) throw new ApiError("not_found", notFound);
  return { course, outline };
}

export function getCourse(env: Env, id: string, includeDrafts: boolean) {
  return courseWithOutline(env, eq(courses.id, id), includeDrafts, `No course ${id}.`);
}

export function getPublishedCourseBySlug(env: Env, slug: string) {
  return courseWithOutline(env, eq(courses.slug, slug), false, `No published course ${slug}.`);
}

export interface CourseChanges {
  title?: string;
  description?: string;
  tags?: string[];
  published?: boolean;
}

/**
 * Edits and (un)publishes a course in one atomic batch that also reads back the result. Publishing an
 * already published course keeps its `published_at`. Tags are replaced in `course_tags` in the same
 * batch (inserted from the course row itself, so an unknown id inserts nothing).
 */
export async function updateCourse(env: Env, id: string, changes: CourseChanges) {
  const db = database(env.DB);
  const now = nowIso();
  const set: SQLiteUpdateSetSource<typeof courses> = { updatedAt: now };
  if (changes.title !== undefined) set.title = changes.title;
  if (changes.description !== undefined) set.description = changes.description;
  const tags = changes.tags ? [...new Set(changes.tags)] : undefined;
  if (tags) set.tags = tags;
  if (changes.published === true) {
    set.published = true;
    set.publishedAt = sql`coalesce(${courses.publishedAt}, ${now})`;
  } else if (changes.published === false) {
    set.published = false;
    set.publishedAt = null;
  }
  const byId = eq(courses.id, id);
  const update = db.update(courses).set(set).where(byId);
  const readCourse = db.select().from(courses).where(byId).limit(1);
  const readOutline = db
    .select(outlineColumns)
    .from(lessons)
    .where(eq(lessons.courseId, id))
    .orderBy(asc(lessons.position));
  const results = tags
    ? await db.batch([
        update,
        db.delete(courseTags).where(eq(courseTags.courseId, id)),
        db.insert(courseTags).select(
          db
            .select({ courseId: courses.id, tag: sql<string>`j.value`.as("tag") })
            .from(courses)
            .innerJoin(sql`json_each(${JSON.stringify(tags)}) AS j`, sql`1 = 1`)
            .where(byId),
        ),
        readCourse,
        readOutline,
      ])
    : await db.batch([update, readCourse, readOutline]);
  const course = (results.at(-2) as CourseRow[])[0];
  const outline = results.at(-1) as LessonOutlineRow[];
  if (!course) throw new ApiError("not_found", `No course ${id}.`);
  return { course, outline };
}

// ---------------------------------------------------------------------------------------------
// Lessons, training blocks, training items

export async function listLessons(
  env: Env,
  filters: { course?: string },
  page: PageRequest,
  includeDrafts: boolean,
): Promise<PageResult<LessonRow>> {
  const db = database(env.DB);
  const where = and(
    filters.course ? eq(lessons.courseId, filters.course) : undefined,
    includeDrafts ? undefined : inArray(lessons.courseId, publishedCourseIds(db)),
  );
  const { limit, offset } = pageBounds(page);
  const [rows, totals] = await db.batch([
    db
      .select()
      .from(lessons)
      .where(where)
      .orderBy(asc(lessons.courseId), asc(lessons.position))
      .limit(limit)
      .offset(offset),
    db.select({ total: count() }).from(lessons).where(where),
  ]);
  return { total: totals[0]?.total ?? 0, rows };
}

export async function listTrainings(
  env: Env,
  filters: { lesson?: string },
  page: PageRequest,
  includeDrafts: boolean,
): Promise<PageResult<TrainingRow>> {
  const db = database(env.DB);
  const where = and(
    filters.lesson ? eq(trainings.lessonId, filters.lesson) : undefined,
    includeDrafts ? undefined : inArray(trainings.courseId, publishedCourseIds(db)),
  );
  const { limit, offset } = pageBounds(page);
  const [rows, totals] = await db.batch([
    db
      .select()
      .from(trainings)
      .where(where)
      .orderBy(asc(trainings.lessonId), asc(trainings.position))
      .limit(limit)
      .offset(offset),
    db.select({ total: count() }).from(trainings).where(where),
  ]);
  return { total: totals[0]?.total ?? 0, rows };
}

export interface TrainingItemFilters {
  type?: ItemType;
  skill?: Skill;
  level?: CefrLevel;
  training?: string;
}

export async function listTrainingItems(
  env: Env,
  filters: TrainingItemFilters,
  page: PageRequest,
  includeDrafts: boolean,
): Promise<PageResult<TrainingItemRow>> {
  const db = database(env.DB);
  const where = and(
    filters.training ? eq(trainingItems.trainingId, filters.training) : undefined,
    filters.type ? eq(trainingItems.type, filters.type) : undefined,
    filters.skill ? eq(trainingItems.skill, filters.skill) : undefined,
    filters.level ? eq(trainingItems.cefrLevel, filters.level) : undefined,
    includeDrafts ? undefined : inArray(trainingItems.courseId, publishedCourseIds(db)),
  );
  const { limit, offset } = pageBounds(page);
  const [rows, totals] = await db.batch([
    db
      .select()
      .from(trainingItems)
      .where(where)
      .orderBy(asc(trainingItems.trainingId), asc(trainingItems.position))
      .limit(limit)
      .offset(offset),
    db.select({ total: count() }).from(trainingItems).where(where),
  ]);
  return { total: totals[0]?.total ?? 0, rows };
}
