import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const CEFR_LEVELS = ["A1", "A2", "B1", "B2", "C1", "C2"] as const;
export type CefrLevel = (typeof CEFR_LEVELS)[number];

export const ITEM_TYPES = [
  "vocabulary",
  "grammar",
  "listening",
  "reading",
  "speaking",
  "writing",
  "multiple_choice",
  "translation",
  "matching",
] as const;
export type ItemType = (typeof ITEM_TYPES)[number];

export const SKILLS = ["reading", "listening", "writing", "speaking", "vocabulary", "grammar"] as const;
export type Skill = (typeof SKILLS)[number];

export const TRAINING_KINDS = ["warm_up", "presentation", "practice", "review", "challenge"] as const;
export type TrainingKind = (typeof TRAINING_KINDS)[number];

const timestamps = {
  createdAt: text("created_at").notNull().default(sql`(strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))`),
  updatedAt: text("updated_at").notNull().default(sql`(strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))`),
};

/** The catalogue is the platform's, shared by every institution. */
export const courses = sqliteTable(
  "courses",
  {
    id: text("id").primaryKey(),
    /**
     * The catalogue's number (docs/design/capacity.md, "Integer keys"): what the rows kept for good
     * carry instead of the id. Given by a trigger where the row is first written (the next after the
     * largest) and copied with the row, so it is the same in every database.
     */
    number: integer("number"),
    slug: text("slug").notNull().unique(),
    title: text("title").notNull(),
    description: text("description").notNull(),
    /** BCP 47 tags. */
    targetLanguage: text("target_language").notNull(),
    sourceLanguage: text("source_language").notNull(),
    cefrFrom: text("cefr_from", { enum: CEFR_LEVELS }).notNull(),
    cefrTo: text("cefr_to", { enum: CEFR_LEVELS }).notNull(),
    published: integer("published", { mode: "boolean" }).notNull().default(false),
    publishedAt: text("published_at"),
    lessonCount: integer("lesson_count").notNull().default(0),
    itemCount: integer("item_count").notNull().default(0),
    estimatedMinutes: integer("estimated_minutes").notNull().default(0),
    tags: text("tags", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
    ...timestamps,
  },
  (t) => [
    index("courses_published_title_idx").on(t.published, t.title, t.id),
    index("courses_language_idx").on(t.targetLanguage, t.title, t.id),
    uniqueIndex("courses_number_idx").on(t.number),
  ],
);

/** One row per (course, tag), so that `?tag=` is an index look-up. */
export const courseTags = sqliteTable(
  "course_tags",
  {
    courseId: text("course_id")
      .notNull()
      .references(() => courses.id),
    tag: text("tag").notNull(),
  },
  (t) => [primaryKey({ columns: [t.courseId, t.tag] }), index("course_tags_tag_idx").on(t.tag, t.courseId)],
);

export const lessons = sqliteTable(
  "lessons",
  {
    id: text("id").primaryKey(),
    /** The catalogue's number, as `courses.number`. */
    number: integer("number"),
    courseId: text("course_id")
      .notNull()
      .references(() => courses.id),
    position: integer("position").notNull(),
    title: text("title").notNull(),
    cefrLevel: text("cefr_level", { enum: CEFR_LEVELS }).notNull(),
    objectives: text("objectives", { mode: "json" }).$type<string[]>().notNull(),
    itemCount: integer("item_count").notNull().default(0),
    estimatedMinutes: integer("estimated_minutes").notNull().default(0),
    ...timestamps,
  },
  (t) => [
    uniqueIndex("lessons_course_position_idx").on(t.courseId, t.position),
    uniqueIndex("lessons_number_idx").on(t.number),
  ],
);

export const trainings = sqliteTable(
  "trainings",
  {
    id: text("id").primaryKey(),
    lessonId: text("lesson_id")
      .notNull()
      .references(() => lessons.id),
    courseId: text("course_id")
      .notNull()
      .references(() => courses.id),
    position: integer("position").notNull(),
    kind: text("kind", { enum: TRAINING_KINDS }).notNull(),
    title: text("title").notNull(),
    itemCount: integer("item_count").notNull().default(0),
    ...timestamps,
  },
  (t) => [uniqueIndex("trainings_lesson_position_idx").on(t.lessonId, t.position)],
);

export const trainingItems = sqliteTable(
  "training_items",
  {
    id: text("id").primaryKey(),
    /** The catalogue's number, as `courses.number`. */
    number: integer("number"),
    trainingId: text("training_id")
      .notNull()
      .references(() => trainings.id),
    /** Denormalised from the training, so that progress updates need no joins. */
    lessonId: text("lesson_id").notNull(),
    courseId: text("course_id").notNull(),
    position: integer("position").notNull(),
    type: text("type", { enum: ITEM_TYPES }).notNull(),
    skill: text("skill", { enum: SKILLS }).notNull(),
    cefrLevel: text("cefr_level", { enum: CEFR_LEVELS }).notNull(),
    xp: integer("xp").notNull(),
    content: text("content", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    ...timestamps,
  },
  (t) => [
    uniqueIndex("training_items_training_position_idx").on(t.trainingId, t.position),
    index("training_items_type_idx").on(t.type, t.id),
    index("training_items_skill_idx").on(t.skill, t.id),
    index("training_items_level_idx").on(t.cefrLevel, t.id),
    uniqueIndex("training_items_number_idx").on(t.number),
  ],
);
