import type { z } from "@hono/zod-openapi";
import type { DeepLinkingItemSchema } from "./schemas";
import type { LinkableCourse } from "./service";

/** A course that may be linked, with its lessons, as the items list answers it. */
export function presentItem(row: LinkableCourse): z.infer<typeof DeepLinkingItemSchema> {
  const { course, lessons } = row;
  return {
    id: course.id,
    slug: course.slug,
    title: course.title,
    description: course.description,
    target_language: course.targetLanguage,
    cefr_from: course.cefrFrom,
    cefr_to: course.cefrTo,
    lessons: lessons.map((lesson) => ({
      id: lesson.id,
      title: lesson.title,
      position: lesson.position,
      cefr_level: lesson.cefrLevel,
    })),
  };
}
