import { env } from "cloudflare:test";

let sequence = 0;

export interface CourseFixture {
  courseId: string;
  slug: string;
  lessons: { id: string; items: { id: string; skill: string; cefrLevel: string; xp: number }[] }[];
  /** Every item id, lesson by lesson, in order. */
  items: string[];
}

/**
 * A small course inserted straight into D1, with consistent counts at every level. Items cycle
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
  } = {},
): Promise<CourseFixture> {
  const {
    lessons = 2,
    blocksPerLesson = 2,
    itemsPerBlock = 3,
    skills = ["vocabulary", "grammar", "reading"],
    levels = ["A1"],
    xp = 10,
    published = true,
    language = "es",
  } = options;
  sequence += 1;
  const tag = `${Date.now().toString(36)}${sequence}${Math.random().toString(36).slice(2, 6)}`;
  const courseId = `crs_fx_${tag}`;
  const slug = `fixture-${tag}`;
  const statements: D1PreparedStatement[] = [];
  const lessonStatements: D1PreparedStatement[] = [];
  const fixture: CourseFixture = { courseId, slug, lessons: [], items: [] };
  let itemCounter = 0;
  for (let l = 0; l < lessons; l++) {
    const lessonId = `les_fx_${tag}_${l}`;
    const lessonItems: CourseFixture["lessons"][number]["items"] = [];
    for (let b = 0; b < blocksPerLesson; b++) {
      const trainingId = `trn_fx_${tag}_${l}_${b}`;
      statements.push(
        env.DB.prepare(
          "INSERT INTO trainings (id, lesson_id, course_id, position, kind, title, item_count) VALUES (?, ?, ?, ?, 'practice', ?, ?)",
        ).bind(trainingId, lessonId, courseId, b + 1, `Block ${b + 1}`, itemsPerBlock),
      );
      for (let i = 0; i < itemsPerBlock; i++) {
        const skill = skills[itemCounter % skills.length]!;
        const cefrLevel = levels[itemCounter % levels.length]!;
        const id = `itm_fx_${tag}_${l}_${b}_${i}`;
        itemCounter += 1;
        statements.push(
          env.DB.prepare(
            "INSERT INTO training_items (id, training_id, lesson_id, course_id, position, type, skill, cefr_level, xp, content) VALUES (?, ?, ?, ?, ?, 'multiple_choice', ?, ?, ?, ?)",
          ).bind(
            id,
            trainingId,
            lessonId,
            courseId,
            i + 1,
            skill,
            cefrLevel,
            xp,
            JSON.stringify({ prompt: `Question ${id}`, options: ["a", "b"], answer: "a" }),
          ),
        );
        lessonItems.push({ id, skill, cefrLevel, xp });
        fixture.items.push(id);
      }
    }
    lessonStatements.push(
      env.DB.prepare(
        "INSERT INTO lessons (id, course_id, position, title, cefr_level, objectives, item_count, estimated_minutes) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      ).bind(
        lessonId,
        courseId,
        l + 1,
        `Lesson ${l + 1}`,
        levels[0]!,
        JSON.stringify([`Objective of lesson ${l + 1}`]),
        lessonItems.length,
        lessonItems.length * 2,
      ),
    );
    fixture.lessons.push({ id: lessonId, items: lessonItems });
  }
  // Parents first: the course, then lessons, trainings and items (foreign keys).
  const course = env.DB.prepare(
    "INSERT INTO courses (id, slug, title, description, target_language, source_language, cefr_from, cefr_to, published, published_at, lesson_count, item_count, estimated_minutes, tags) VALUES (?, ?, ?, ?, ?, 'en', ?, ?, ?, ?, ?, ?, ?, '[]')",
  ).bind(
    courseId,
    slug,
    `Fixture course ${tag}`,
    "A course for tests.",
    language,
    levels[0]!,
    levels[levels.length - 1]!,
    published ? 1 : 0,
    published ? new Date().toISOString() : null,
    lessons,
    itemCounter,
    itemCounter * 2,
  );
  await env.DB.batch([course, ...lessonStatements, ...statements]);
  return fixture;
}
