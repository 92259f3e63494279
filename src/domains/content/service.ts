import { and, asc, desc, eq, exists, gte, inArray, lte, type SQL, sql } from "drizzle-orm";
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
import { type Database, database } from "../../platform/db";
import { ApiError } from "../../platform/errors";
import { type PageRequest, type PageResult, pageBounds, pageWithTotal } from "../../platform/http/pagination";
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

/**
 * The courses a caller sees, as a condition on `courses`: all of them for platform staff
 * (`seesDrafts`), the published ones for everybody else. Any other domain that takes a course id
 * from a caller checks it with this, so that a draft answers exactly as an unknown id does.
 */
export function visibleCourses(includeDrafts: boolean): SQL | undefined {
  return includeDrafts ? undefined : published;
}
/** The ids of published courses, for the tables below a course (each carries `course_id`). */
const publishedCourseIds = (db: Database) => db.select({ id: courses.id }).from(courses).where(published);

const COURSE_ORDER: Record<CourseSort, SQL[]> = {
  title: [sql`${courses.title} COLLATE NOCASE ASC`, asc(courses.id)],
  "-title": [sql`${courses.title} COLLATE NOCASE DESC`, desc(courses.id)],
  created_at: [asc(courses.createdAt), asc(courses.id)],
  "-created_at": [desc(courses.createdAt), desc(courses.id)],
  // Unpublished courses (no published_at) last in both directions.
  published_at: [sql`${courses.publishedAt} ASC NULLS LAST`, asc(courses.id)],
  "-published_at": [sql`${courses.publishedAt} DESC NULLS LAST`, desc(courses.id)],
};

/** The filter of a course list; `null` when it can match nothing (a non-staff caller asking for drafts). */
function courseWhere(db: Database, filters: CourseFilters, includeDrafts: boolean): SQL | undefined | null {
  if (filters.published === false && !includeDrafts) return null;
  const visibility =
    filters.published !== undefined
      ? eq(courses.published, filters.published)
      : includeDrafts
        ? undefined
        : published;
  const { language, level, q, tag } = filters;
  return and(
    visibility,
    language !== undefined ? eq(courses.targetLanguage, canonicalLanguageTag(language)) : undefined,
    // A1 < A2 < … < C2 as text.
    level !== undefined ? and(lte(courses.cefrFrom, level), gte(courses.cefrTo, level)) : undefined,
    q !== undefined ? sql`${courses.title} LIKE ${likeContains(q)} ESCAPE '\\'` : undefined,
    tag !== undefined
      ? exists(
          db
            .select({ one: sql`1` })
            .from(courseTags)
            .where(and(eq(courseTags.courseId, courses.id), eq(courseTags.tag, tag))),
        )
      : undefined,
  );
}

/** A page of courses and their total (one D1 round trip). */
export async function listCourses(
  env: Env,
  filters: CourseFilters,
  page: PageRequest,
  includeDrafts: boolean,
): Promise<PageResult<CourseRow>> {
  const db = database(env.DB);
  const where = courseWhere(db, filters, includeDrafts);
  if (where === null) return { total: 0, rows: [] };
  const { limit, offset } = pageBounds(page);
  const pageQuery = db
    .select()
    .from(courses)
    .where(where)
    .orderBy(...COURSE_ORDER[filters.sort])
    .limit(limit)
    .offset(offset);
  return pageWithTotal(db, pageQuery, courses, where);
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
  const where = and(by, visibleCourses(includeDrafts));
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
  const pageQuery = db
    .select()
    .from(lessons)
    .where(where)
    .orderBy(asc(lessons.courseId), asc(lessons.position))
    .limit(limit)
    .offset(offset);
  return pageWithTotal(db, pageQuery, lessons, where);
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
  const pageQuery = db
    .select()
    .from(trainings)
    .where(where)
    .orderBy(asc(trainings.lessonId), asc(trainings.position))
    .limit(limit)
    .offset(offset);
  return pageWithTotal(db, pageQuery, trainings, where);
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
  const pageQuery = db
    .select()
    .from(trainingItems)
    .where(where)
    .orderBy(asc(trainingItems.trainingId), asc(trainingItems.position))
    .limit(limit)
    .offset(offset);
  return pageWithTotal(db, pageQuery, trainingItems, where);
}
