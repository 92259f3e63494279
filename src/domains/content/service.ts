import { and, asc, count, desc, eq, gte, inArray, lte, sql, type SQL } from "drizzle-orm";
import type { SQLiteUpdateSetSource } from "drizzle-orm/sqlite-core";
import { courses, courseTags, lessons, trainingItems, trainings, type CefrLevel, type ItemType, type Skill } from "../../db/schema";
import type { Env } from "../../env";
import type { Principal } from "../../platform/auth/principal";
import { database, type Database } from "../../platform/db";
import { ApiError } from "../../platform/errors";
import { pageBounds, type PageRequest } from "../../platform/http/pagination";
import { nowIso } from "../../platform/ids";
import type { CourseRow, LessonOutlineRow, LessonRow, TrainingItemRow, TrainingRow } from "./present";
import { canonicalLanguageTag, type CourseSort } from "./schemas";

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

/** `null` when the combination can match nothing (a non-staff caller asking for drafts). */
function courseConditions(filters: CourseFilters, includeDrafts: boolean): SQL[] | null {
  const where: SQL[] = [];
  if (filters.published === false) {
    if (!includeDrafts) return null;
    where.push(eq(courses.published, false));
  } else if (filters.published === true || !includeDrafts) {
    where.push(published);
  }
  if (filters.language) where.push(eq(courses.targetLanguage, canonicalLanguageTag(filters.language)));
  if (filters.level) where.push(lte(courses.cefrFrom, filters.level), gte(courses.cefrTo, filters.level)); // A1 < A2 < … < C2 as text
  if (filters.q) where.push(sql`${courses.title} LIKE ${likeContains(filters.q)} ESCAPE '\\'`);
  if (filters.tag) where.push(sql`EXISTS (SELECT 1 FROM ${courseTags} WHERE ${courseTags.courseId} = ${courses.id} AND ${courseTags.tag} = ${filters.tag})`);
  return where;
}

function courseOrder(sort: CourseSort): SQL[] {
  const descending = sort.startsWith("-");
  const dir = descending ? desc : asc;
  switch (sort.replace(/^-/, "")) {
    case "created_at":
      return [dir(courses.createdAt), dir(courses.id)];
    case "published_at":
      // Unpublished courses (no published_at) last in both directions.
      return [descending ? sql`${courses.publishedAt} DESC NULLS LAST` : sql`${courses.publishedAt} ASC NULLS LAST`, dir(courses.id)];
    default:
      return [dir(sql`${courses.title} COLLATE NOCASE`), dir(courses.id)];
  }
}

/** One D1 round trip: the page and the total in one batch. */
export async function listCourses(env: Env, filters: CourseFilters, page: PageRequest, includeDrafts: boolean): Promise<PageResult<CourseRow>> {
  const conditions = courseConditions(filters, includeDrafts);
  if (!conditions) return EMPTY;
  const db = database(env.DB);
  const where = and(...conditions);
  const { limit, offset } = pageBounds(page);
  const [rows, totals] = await db.batch([
    db.select().from(courses).where(where).orderBy(...courseOrder(filters.sort)).limit(limit).offset(offset),
    db.select({ total: count() }).from(courses).where(where),
  ]);
  return { total: totals[0]?.total ?? 0, rows };
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
async function courseWithOutline(env: Env, by: SQL, includeDrafts: boolean, notFound: string): Promise<{ course: CourseRow; outline: LessonOutlineRow[] }> {
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
  const readOutline = db.select(outlineColumns).from(lessons).where(eq(lessons.courseId, id)).orderBy(asc(lessons.position));
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

export async function listLessons(env: Env, filters: { course?: string }, page: PageRequest, includeDrafts: boolean): Promise<PageResult<LessonRow>> {
  const db = database(env.DB);
  const where = and(
    filters.course ? eq(lessons.courseId, filters.course) : undefined,
    includeDrafts ? undefined : inArray(lessons.courseId, publishedCourseIds(db)),
  );
  const { limit, offset } = pageBounds(page);
  const [rows, totals] = await db.batch([
    db.select().from(lessons).where(where).orderBy(asc(lessons.courseId), asc(lessons.position)).limit(limit).offset(offset),
    db.select({ total: count() }).from(lessons).where(where),
  ]);
  return { total: totals[0]?.total ?? 0, rows };
}

export async function listTrainings(env: Env, filters: { lesson?: string }, page: PageRequest, includeDrafts: boolean): Promise<PageResult<TrainingRow>> {
  const db = database(env.DB);
  const where = and(
    filters.lesson ? eq(trainings.lessonId, filters.lesson) : undefined,
    includeDrafts ? undefined : inArray(trainings.courseId, publishedCourseIds(db)),
  );
  const { limit, offset } = pageBounds(page);
  const [rows, totals] = await db.batch([
    db.select().from(trainings).where(where).orderBy(asc(trainings.lessonId), asc(trainings.position)).limit(limit).offset(offset),
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

export async function listTrainingItems(env: Env, filters: TrainingItemFilters, page: PageRequest, includeDrafts: boolean): Promise<PageResult<TrainingItemRow>> {
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
    db.select().from(trainingItems).where(where).orderBy(asc(trainingItems.trainingId), asc(trainingItems.position)).limit(limit).offset(offset),
    db.select({ total: count() }).from(trainingItems).where(where),
  ]);
  return { total: totals[0]?.total ?? 0, rows };
}
