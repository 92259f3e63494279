import { z } from "@hono/zod-openapi";
import { CEFR_LEVELS, ITEM_TYPES, SKILLS, TRAINING_KINDS } from "../../db/schema";
import { pageQueryShape, pageSchema } from "../../platform/http/pagination";
import { displayText } from "../../platform/text";

// ---------------------------------------------------------------------------------------------
// Filters

/**
 * A well-formed BCP 47 language tag (RFC 5646 `langtag` or a private-use tag; the irregular
 * grandfathered tags are not accepted). Matching is case-insensitive, as the RFC says: spelt out in
 * the classes rather than with the `i` flag, which the OpenAPI `pattern` cannot carry.
 */
const BCP47 =
  /^(?:(?:[a-zA-Z]{2,3}(?:-[a-zA-Z]{3}){0,3}|[a-zA-Z]{4}|[a-zA-Z]{5,8})(?:-[a-zA-Z]{4})?(?:-(?:[a-zA-Z]{2}|\d{3}))?(?:-(?:[a-zA-Z\d]{5,8}|\d[a-zA-Z\d]{3}))*(?:-[a-wyzA-WYZ\d](?:-[a-zA-Z\d]{2,8})+)*(?:-[xX](?:-[a-zA-Z\d]{1,8})+)?|[xX](?:-[a-zA-Z\d]{1,8})+)$/;

/** `es`, `pt-br`, `ZH-hant-tw` → `es`, `pt-BR`, `zh-Hant-TW`: the case in which tags are stored. */
export function canonicalLanguageTag(tag: string): string {
  let singleton = false;
  return tag
    .split("-")
    .map((part, i) => {
      const lower = part.toLowerCase();
      if (i === 0 || singleton) return lower;
      if (part.length === 1) {
        singleton = true;
        return lower;
      }
      if (part.length === 4 && /^[a-z]+$/i.test(part)) return lower.charAt(0).toUpperCase() + lower.slice(1);
      if (part.length === 2 && /^[a-z]+$/i.test(part)) return part.toUpperCase();
      return lower;
    })
    .join("-");
}

const CEFR_LIST = CEFR_LEVELS.join(", ");

export const LanguageFilter = z
  .string()
  .max(64, "must be at most 64 characters")
  .regex(BCP47, "must be a well-formed BCP 47 language tag, e.g. `es` or `pt-BR`")
  .openapi({ example: "es", description: "Target language, a BCP 47 tag (exact match, case-insensitive)." });

export const CefrFilter = z.enum(CEFR_LEVELS, { message: `must be one of ${CEFR_LIST}` });

export const COURSE_SORTS = [
  "title",
  "-title",
  "created_at",
  "-created_at",
  "published_at",
  "-published_at",
] as const;
export type CourseSort = (typeof COURSE_SORTS)[number];

const ID = /^[A-Za-z0-9_-]{1,100}$/;
const idFilter = (what: string, example: string) =>
  z
    .string()
    .regex(ID, "must be an id (letters, digits, `_` and `-`, at most 100)")
    .openapi({
      example,
      description: `Only those of this ${what} (an id; an unknown id gives an empty list).`,
    });

const TAG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const TagName = z
  .string()
  .max(40, "must be at most 40 characters")
  .regex(TAG, "must be lower-case letters and digits separated by single hyphens")
  .openapi({ example: "travel" });

/** The filters of both course lists; `published` is only on the authenticated one. */
export const courseFilterShape = {
  language: LanguageFilter.optional(),
  level: CefrFilter.optional().openapi({
    description: "Only courses whose CEFR range covers this level.",
    example: "B1",
  }),
  q: z
    .string()
    .trim()
    .min(2, "must be at least 2 characters")
    .max(100, "must be at most 100 characters")
    .optional()
    .openapi({
      description: "Case-insensitive search in the title (at least 2 characters; `%` and `_` are literal).",
      example: "spanish",
    }),
  tag: TagName.optional().openapi({ description: "Only courses with this tag." }),
  sort: z
    .enum(COURSE_SORTS, { message: `must be one of ${COURSE_SORTS.join(", ")}` })
    .default("title")
    .openapi({
      description:
        "Order; `-` for descending. Ties are broken by id in the same direction; unpublished courses come last by `published_at`.",
      example: "title",
    }),
};

export const ListCoursesQuery = z.object({
  ...pageQueryShape,
  ...courseFilterShape,
  published: z.enum(["true", "false"], { message: "must be true or false" }).optional().openapi({
    description:
      "Only published (`true`) or only unpublished (`false`) courses. Only platform staff see unpublished courses; for everybody else `false` is an empty list.",
  }),
});

export const PUBLIC_COURSE_QUERY_PARAMS = ["page", "per_page", ...Object.keys(courseFilterShape)] as const;
export const ListPublicCoursesQuery = z.object({ ...pageQueryShape, ...courseFilterShape });

export const ListLessonsQuery = z.object({
  ...pageQueryShape,
  course: idFilter("course", "crs_demo_es_a1").optional(),
});
export const ListTrainingsQuery = z.object({
  ...pageQueryShape,
  lesson: idFilter("lesson", "les_demo_es_a1_01").optional(),
});
export const ListTrainingItemsQuery = z.object({
  ...pageQueryShape,
  type: z
    .enum(ITEM_TYPES, { message: `must be one of ${ITEM_TYPES.join(", ")}` })
    .optional()
    .openapi({ description: "Only items of this type." }),
  skill: z
    .enum(SKILLS, { message: `must be one of ${SKILLS.join(", ")}` })
    .optional()
    .openapi({ description: "Only items practising this skill." }),
  level: CefrFilter.optional().openapi({ description: "Only items of this CEFR level.", example: "A2" }),
  training: idFilter("training block", "trn_demo_es_a1_01_1").optional(),
});

export const CourseIdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(100)
    .openapi({ param: { name: "id", in: "path" }, example: "crs_demo_es_a1" }),
});

export const CourseSlugParam = z.object({
  slug: z
    .string()
    .min(1)
    .max(200)
    .openapi({ param: { name: "slug", in: "path" }, example: "spanish-a1-first-steps" }),
});

// ---------------------------------------------------------------------------------------------
// Wire shapes

const Cefr = z.enum(CEFR_LEVELS).openapi({ example: "A1" });
const Timestamp = z.string().openapi({ example: "2026-11-21T09:30:00Z" });

export const CourseSchema = z
  .object({
    id: z.string().openapi({ example: "crs_demo_es_a1" }),
    slug: z.string().openapi({ example: "spanish-a1-first-steps" }),
    title: z.string().openapi({ example: "Spanish A1: First Steps" }),
    description: z.string(),
    target_language: z.string().openapi({ example: "es", description: "BCP 47 tag of the language taught." }),
    source_language: z
      .string()
      .openapi({ example: "en", description: "BCP 47 tag of the language of instruction." }),
    cefr_from: Cefr,
    cefr_to: Cefr.openapi({ example: "A2" }),
    published: z.boolean(),
    published_at: Timestamp.nullable(),
    lesson_count: z.number().int(),
    item_count: z.number().int(),
    estimated_minutes: z.number().int(),
    tags: z.array(z.string()).openapi({ example: ["beginner", "travel"] }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("Course");

export const LessonOutlineSchema = z
  .object({
    id: z.string().openapi({ example: "les_demo_es_a1_01" }),
    position: z.number().int().openapi({ example: 1 }),
    title: z.string().openapi({ example: "Greetings and introductions" }),
    cefr_level: Cefr,
    item_count: z.number().int(),
    estimated_minutes: z.number().int(),
    objectives: z.array(z.string()),
  })
  .openapi("LessonOutline");

export const CourseDetailsSchema = CourseSchema.extend({
  lessons: z.array(LessonOutlineSchema).openapi({ description: "Every lesson, in order." }),
}).openapi("CourseDetails");

export const LessonSchema = LessonOutlineSchema.extend({
  course_id: z.string(),
  created_at: Timestamp,
  updated_at: Timestamp,
}).openapi("Lesson");

export const TrainingSchema = z
  .object({
    id: z.string().openapi({ example: "trn_demo_es_a1_01_1" }),
    lesson_id: z.string(),
    course_id: z.string(),
    position: z.number().int(),
    kind: z.enum(TRAINING_KINDS),
    title: z.string(),
    item_count: z.number().int(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("Training");

export const TrainingItemSchema = z
  .object({
    id: z.string().openapi({ example: "itm_demo_es_a1_01_1_01" }),
    training_id: z.string(),
    lesson_id: z.string(),
    course_id: z.string(),
    position: z.number().int(),
    type: z.enum(ITEM_TYPES),
    skill: z.enum(SKILLS),
    cefr_level: Cefr,
    xp: z.number().int().openapi({ example: 10 }),
    content: z.record(z.string(), z.unknown()).openapi({
      description: "The exercise: a `prompt` and, by type, options and answer, a passage, pairs, audio…",
      example: {
        prompt: "What does «la manzana» mean?",
        options: ["the apple", "the bread", "the cheese"],
        answer: "the apple",
      },
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("TrainingItem");

export const CoursePageSchema = pageSchema(CourseSchema, "CoursePage");
export const LessonPageSchema = pageSchema(LessonSchema, "LessonPage");
export const TrainingPageSchema = pageSchema(TrainingSchema, "TrainingPage");
export const TrainingItemPageSchema = pageSchema(TrainingItemSchema, "TrainingItemPage");

export const UpdateCourseBody = z
  .strictObject({
    title: displayText({ max: 200 }).optional(),
    description: displayText({ max: 5000, min: 0, multiline: true }).optional(),
    tags: z
      .array(TagName)
      .max(20, "must list at most 20 tags")
      .optional()
      .openapi({ description: "Replaces every tag of the course (duplicates are dropped)." }),
    published: z.boolean().optional().openapi({
      description:
        "`true` publishes (sets `published_at` unless already published), `false` unpublishes (clears it).",
    }),
  })
  .refine((body) => Object.keys(body).length > 0, {
    message: "send at least one of title, description, tags, published",
  })
  .openapi("UpdateCourseRequest");
