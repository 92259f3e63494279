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
import type { Database } from "../../platform/db";
import { ApiError } from "../../platform/errors";
import { type PageRequest, type PageResult, pageBounds, pageWithTotal } from "../../platform/http/pagination";
import { nowIso } from "../../platform/ids";
import type { ServiceContext } from "../../platform/service/context";
import { everyDatabase } from "../../platform/service/context";
import { visibleCourses } from "./policy";
import type { CourseRow, LessonOutlineRow, LessonRow, TrainingItemRow, TrainingRow } from "./present";
import { type CourseSort, canonicalLanguageTag } from "./schemas";

/**
 * The content services. Who sees drafts is content/policy.ts's answer (`seesDrafts`), passed in by the
 * route as `includeDrafts`; the public catalogue passes false.
 */

// Exports and LTI still import these from here; policy.ts is where they live.
export { seesDrafts, visibleCourses } from "./policy";

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
  ctx: ServiceContext,
  input: { filters: CourseFilters; page: PageRequest; includeDrafts: boolean },
): Promise<PageResult<CourseRow>> {
  const { db } = ctx;
  const { filters, page, includeDrafts } = input;
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
  db: Database,
  by: SQL,
  includeDrafts: boolean,
  notFound: string,
): Promise<{ course: CourseRow; outline: LessonOutlineRow[] }> {
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

export function getCourse(ctx: ServiceContext, input: { id: string; includeDrafts: boolean }) {
  return courseWithOutline(ctx.db, eq(courses.id, input.id), input.includeDrafts, `No course ${input.id}.`);
}

export function getPublishedCourseBySlug(ctx: ServiceContext, slug: string) {
  return courseWithOutline(ctx.db, eq(courses.slug, slug), false, `No published course ${slug}.`);
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
export async function updateCourse(ctx: ServiceContext, input: { id: string; changes: CourseChanges }) {
  const { db } = ctx;
  const { id, changes } = input;
  const now = nowIso(ctx.now());
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
  await copyCourseToOtherDatabases(ctx, course);
  return { course, outline };
}

/**
 * The catalogue is in every database (design/multi-database.md): an edit made in the first is
 * copied whole to the others — the row as it now is and its tags — so that a copy an earlier edit
 * failed to reach is made right by the next one (the edit answers 500 until every copy is written,
 * and repeating it is harmless).
 */
async function copyCourseToOtherDatabases(ctx: ServiceContext, course: CourseRow): Promise<void> {
  const { id: _id, ...columns } = course;
  const others = everyDatabase(ctx).filter(({ name }) => name !== ctx.database);
  await Promise.all(
    others.map(({ db }) =>
      db.batch([
        db.insert(courses).values(course).onConflictDoUpdate({ target: courses.id, set: columns }),
        db.delete(courseTags).where(eq(courseTags.courseId, course.id)),
        ...(course.tags.length > 0
          ? [db.insert(courseTags).values(course.tags.map((tag) => ({ courseId: course.id, tag })))]
          : []),
      ]),
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// Lessons, training blocks, training items

export async function listLessons(
  ctx: ServiceContext,
  input: { filters: { course?: string }; page: PageRequest; includeDrafts: boolean },
): Promise<PageResult<LessonRow>> {
  const { db } = ctx;
  const { filters, page, includeDrafts } = input;
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
  ctx: ServiceContext,
  input: { filters: { lesson?: string }; page: PageRequest; includeDrafts: boolean },
): Promise<PageResult<TrainingRow>> {
  const { db } = ctx;
  const { filters, page, includeDrafts } = input;
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
  ctx: ServiceContext,
  input: { filters: TrainingItemFilters; page: PageRequest; includeDrafts: boolean },
): Promise<PageResult<TrainingItemRow>> {
  const { db } = ctx;
  const { filters, page, includeDrafts } = input;
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
