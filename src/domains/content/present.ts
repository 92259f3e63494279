import type { z } from "@hono/zod-openapi";
import type { courses, lessons, trainingItems, trainings } from "../../db/schema";
import type {
  CourseDetailsSchema,
  CourseSchema,
  LessonOutlineSchema,
  LessonSchema,
  TrainingItemSchema,
  TrainingSchema,
} from "./schemas";

export type CourseRow = typeof courses.$inferSelect;
export type LessonRow = typeof lessons.$inferSelect;
export type LessonOutlineRow = Pick<
  LessonRow,
  "id" | "position" | "title" | "cefrLevel" | "itemCount" | "estimatedMinutes" | "objectives"
>;
export type TrainingRow = typeof trainings.$inferSelect;
export type TrainingItemRow = typeof trainingItems.$inferSelect;

export function presentCourse(row: CourseRow): z.infer<typeof CourseSchema> {
  return {
    id: row.id,
    slug: row.slug,
    title: row.title,
    description: row.description,
    target_language: row.targetLanguage,
    source_language: row.sourceLanguage,
    cefr_from: row.cefrFrom,
    cefr_to: row.cefrTo,
    published: row.published,
    published_at: row.publishedAt,
    lesson_count: row.lessonCount,
    item_count: row.itemCount,
    estimated_minutes: row.estimatedMinutes,
    tags: row.tags,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

export function presentLessonOutline(row: LessonOutlineRow): z.infer<typeof LessonOutlineSchema> {
  return {
    id: row.id,
    position: row.position,
    title: row.title,
    cefr_level: row.cefrLevel,
    item_count: row.itemCount,
    estimated_minutes: row.estimatedMinutes,
    objectives: row.objectives,
  };
}

export function presentCourseDetails(
  course: CourseRow,
  outline: LessonOutlineRow[],
): z.infer<typeof CourseDetailsSchema> {
  return { ...presentCourse(course), lessons: outline.map(presentLessonOutline) };
}

export function presentLesson(row: LessonRow): z.infer<typeof LessonSchema> {
  return {
    ...presentLessonOutline(row),
    course_id: row.courseId,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

export function presentTraining(row: TrainingRow): z.infer<typeof TrainingSchema> {
  return {
    id: row.id,
    lesson_id: row.lessonId,
    course_id: row.courseId,
    position: row.position,
    kind: row.kind,
    title: row.title,
    item_count: row.itemCount,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

export function presentTrainingItem(row: TrainingItemRow): z.infer<typeof TrainingItemSchema> {
  return {
    id: row.id,
    training_id: row.trainingId,
    lesson_id: row.lessonId,
    course_id: row.courseId,
    position: row.position,
    type: row.type,
    skill: row.skill,
    cefr_level: row.cefrLevel,
    xp: row.xp,
    content: row.content,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}
