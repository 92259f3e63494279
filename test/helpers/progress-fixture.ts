import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { type CefrLevel, courses, lessons, type Skill, trainingItems, trainings } from "../../src/db/schema";
import { chunk, rowsPerStatement } from "../../src/platform/batch";
import { database } from "../../src/platform/db";

let sequence = 0;

export interface CourseFixture {
  courseId: string;
  slug: string;
  lessons: { id: string; items: { id: string; skill: string; cefrLevel: string; xp: number }[] }[];
  /** Every item id, lesson by lesson, in order. */
  items: string[];
}

/**
 * A small course inserted through drizzle, with consistent counts at every level. Items cycle
 * through `skills` and `levels`; every item is worth `xp`.
 */
export async function createPublishedCourse(
  options: {
    lessons?: number;
    blocksPerLesson?: number;
    itemsPerBlock?: number;
    skills?: string[];
    levels?: string[];
    xp?: number;
    published?: boolean;
    language?: string;
    /** The databases to write it to: the catalogue is in every database (design/multi-database.md). */
    databases?: ("DB" | "DB_1")[];
  } = {},
): Promise<CourseFixture> {
  const {
    lessons: lessonCount = 2,
    blocksPerLesson = 2,
    itemsPerBlock = 3,
    skills = ["vocabulary", "grammar", "reading"],
    levels = ["A1"],
    xp = 10,
    published = true,
    language = "es",
    databases = ["DB"],
  } = options;
  sequence += 1;
  const tag = `${Date.now().toString(36)}${sequence}${Math.random().toString(36).slice(2, 6)}`;
  const courseId = `crs_fx_${tag}`;
  const slug = `fixture-${tag}`;
  const fixture: CourseFixture = { courseId, slug, lessons: [], items: [] };
  const lessonRows: (typeof lessons.$inferInsert)[] = [];
  const trainingRows: (typeof trainings.$inferInsert)[] = [];
  const itemRows: (typeof trainingItems.$inferInsert)[] = [];
  let itemCounter = 0;
  for (let l = 0; l < lessonCount; l++) {
    const lessonId = `les_fx_${tag}_${l}`;
    const lessonItems: CourseFixture["lessons"][number]["items"] = [];
    for (let b = 0; b < blocksPerLesson; b++) {
      const trainingId = `trn_fx_${tag}_${l}_${b}`;
      trainingRows.push({
        id: trainingId,
        lessonId,
        courseId,
        position: b + 1,
        kind: "practice",
        title: `Block ${b + 1}`,
        itemCount: itemsPerBlock,
      });
      for (let i = 0; i < itemsPerBlock; i++) {
        const skill = skills[itemCounter % skills.length]!;
        const cefrLevel = levels[itemCounter % levels.length]!;
        const id = `itm_fx_${tag}_${l}_${b}_${i}`;
        itemCounter += 1;
        itemRows.push({
          id,
          trainingId,
          lessonId,
          courseId,
          position: i + 1,
          type: "multiple_choice",
          skill: skill as Skill,
          cefrLevel: cefrLevel as CefrLevel,
          xp,
          content: { prompt: `Question ${id}`, options: ["a", "b"], answer: "a" },
        });
        lessonItems.push({ id, skill, cefrLevel, xp });
        fixture.items.push(id);
      }
    }
    lessonRows.push({
      id: lessonId,
      courseId,
      position: l + 1,
      title: `Lesson ${l + 1}`,
      cefrLevel: levels[0]! as CefrLevel,
      objectives: [`Objective of lesson ${l + 1}`],
      itemCount: lessonItems.length,
      estimatedMinutes: lessonItems.length * 2,
    });
    fixture.lessons.push({ id: lessonId, items: lessonItems });
  }
  // Written in the first database, then copied with its numbers, as the catalogue is: a number is
  // the same row in every database (docs/design/capacity.md, "Integer keys").
  const [first, ...others] = databases;
  let courseNumber: number | null = null;
  if (first) {
    const db = database(env[first]);
    await insertCourse(db);
    const [course, lessonNumbers, itemNumbers] = await db.batch([
      db.select({ number: courses.number }).from(courses).where(eq(courses.id, courseId)),
      db
        .select({ id: lessons.id, number: lessons.number })
        .from(lessons)
        .where(eq(lessons.courseId, courseId)),
      db
        .select({ id: trainingItems.id, number: trainingItems.number })
        .from(trainingItems)
        .where(eq(trainingItems.courseId, courseId)),
    ]);
    courseNumber = course[0]?.number ?? null;
    const byId = new Map([...lessonNumbers, ...itemNumbers].map((row) => [row.id, row.number]));
    for (const row of [...lessonRows, ...itemRows]) row.number = byId.get(row.id) ?? null;
  }
  for (const name of others) await insertCourse(database(env[name]));
  return fixture;

  async function insertCourse(db: ReturnType<typeof database>) {
    // Parents first: the course, then lessons, trainings and items (foreign keys); one batch.
    const course = db.insert(courses).values({
      id: courseId,
      number: courseNumber,
      slug,
      title: `Fixture course ${tag}`,
      description: "A course for tests.",
      targetLanguage: language,
      sourceLanguage: "en",
      cefrFrom: levels[0]! as CefrLevel,
      cefrTo: levels[levels.length - 1]! as CefrLevel,
      published,
      publishedAt: published ? new Date().toISOString() : null,
      lessonCount,
      itemCount: itemCounter,
      estimatedMinutes: itemCounter * 2,
      tags: [],
    });
    const rows = <T>(table: Parameters<typeof db.insert>[0], values: T[], columns: number) =>
      chunk(values, rowsPerStatement(columns)).map((part) => db.insert(table).values(part as never));
    await db.batch([
      course,
      ...rows(lessons, lessonRows, 9),
      ...rows(trainings, trainingRows, 7),
      ...rows(trainingItems, itemRows, 11),
    ]);
  }
}
