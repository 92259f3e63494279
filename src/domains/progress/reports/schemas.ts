import { z } from "@hono/zod-openapi";
import { CEFR_LEVELS, LESSON_STATUSES, SKILLS } from "../../../db/schema";
import { calendarDay, DAY_BOUNDS_NOTE } from "../../../platform/dates";
import { pageQueryShape, pageSchema } from "../../../platform/http/pagination";
import { CEFR_ACCURACY_NEEDED, CEFR_EVIDENCE_NEEDED } from "../rules";

/**
 * Wire shapes of the progress reports, and the query parameters and pieces they share (insights/ and
 * gamification/ hold their own shapes).
 */

export const MAX_HISTORY_DAYS = 366;
export const DEFAULT_HISTORY_DAYS = 30;

// ---------------------------------------------------------------------------------------------
// Query parameters

const ID = /^[A-Za-z0-9_-]{1,100}$/;

export const userIdField = z
  .string()
  .regex(ID, "must be a user id")
  .optional()
  .openapi({
    param: { name: "user_id", in: "query" },
    example: "usr_01JD3Q8W2X4Y5Z6A7B8C9D0E1F",
    description:
      "Whose progress: defaults to you. Instructors and institution admins may name a member of their institution (another institution's user: 404); a learner naming anybody else gets 403.",
  });

export const LearnerQuery = z.object({ user_id: userIdField });

const dayParam = (name: string, description: string) =>
  calendarDay()
    .optional()
    .openapi({
      param: { name, in: "query" },
      example: name === "from" ? "2026-10-01" : "2026-10-30",
      description: `${description} ${DAY_BOUNDS_NOTE}`,
    });

export const CourseParam = z.object({
  course: z
    .string()
    .regex(ID, "must be a course id")
    .openapi({
      param: { name: "course", in: "path" },
      example: "crs_01JD3Q8W2X4Y5Z6A7B8C9D0E1F",
      description: "The course id.",
    }),
});

export const LessonProgressQuery = z.object({ ...pageQueryShape, user_id: userIdField });

export const GRANULARITIES = ["day", "week"] as const;

export const HistoryQuery = z.object({
  from: dayParam(
    "from",
    `First day (inclusive) in the learner's time zone. Default: ${DEFAULT_HISTORY_DAYS - 1} days before \`to\`. The range may span at most ${MAX_HISTORY_DAYS} days.`,
  ),
  to: dayParam(
    "to",
    "Last day (inclusive) in the learner's time zone. Default: the learner's today. Must not be before `from`.",
  ),
  granularity: z
    .enum(GRANULARITIES, { message: "must be day or week" })
    .default("day")
    .openapi({
      param: { name: "granularity", in: "query" },
      example: "day",
      description:
        "`day`: one point per day. `week`: one point per ISO week, dated by its Monday, summing the days of the range that fall in it.",
    }),
  user_id: userIdField,
});

// ---------------------------------------------------------------------------------------------
// Shared pieces

export const Day = z
  .string()
  .openapi({ example: "2026-11-21", description: "A calendar day, `YYYY-MM-DD`." });
export const Timestamp = z.string().openapi({ example: "2026-11-21T09:30:00Z" });
export const Level = z.enum(CEFR_LEVELS);
export const Skill = z.enum(SKILLS);
export const Minutes = z.number().openapi({ example: 12.5, description: "Minutes, to one decimal." });
export const Accuracy = z.number().nullable().openapi({
  example: 0.75,
  description: "Share of attempts marked correct, 0–1 to three decimals; null without attempts.",
});

// ---------------------------------------------------------------------------------------------
// GET /api/courses/{course}/lesson-progress

export const LessonProgressSchema = z
  .object({
    lesson_id: z.string().openapi({ example: "les_01JD3Q8W2X4Y5Z6A7B8C9D0E1F" }),
    position: z.number().int().openapi({ example: 1 }),
    title: z.string().openapi({ example: "Greetings" }),
    items_done: z.number().int().openapi({ description: "Items passed at least once." }),
    items_total: z.number().int(),
    percent: z
      .number()
      .int()
      .openapi({ example: 50, description: "items_done / items_total, 0–100, rounded." }),
    status: z.enum(LESSON_STATUSES).openapi({
      description: "`not_started` until the first attempt; `completed` once every item is passed.",
    }),
    started_at: Timestamp.nullable(),
    completed_at: Timestamp.nullable(),
    score: z.number().nullable().openapi({
      example: 0.925,
      description:
        "Mean best score of the passed items, 0–1 to three decimals; null until an item is passed.",
    }),
  })
  .openapi("LessonProgress", { description: "One lesson of a course and the learner's progress in it." });

export const LessonProgressPageSchema = pageSchema(LessonProgressSchema, "LessonProgressPage");

// ---------------------------------------------------------------------------------------------
// GET /api/progress-history

const HistoryFields = {
  attempts: z.number().int(),
  items_completed: z.number().int().openapi({ description: "Items passed for the first time." }),
  correct: z.number().int().openapi({ description: "Attempts marked correct." }),
  accuracy: Accuracy,
  xp: z.number().int(),
  minutes: Minutes.openapi({ description: "Time spent on attempts, in minutes to one decimal." }),
};

export const HistoryPointSchema = z
  .object({ date: Day.openapi({ description: "The day, or the Monday of the week." }), ...HistoryFields })
  .openapi("ProgressHistoryPoint");

export const ProgressHistorySchema = z
  .object({
    user_id: z.string(),
    time_zone: z.string().openapi({
      example: "Europe/Madrid",
      description: "The learner's time zone, in which days are counted.",
    }),
    from: Day,
    to: Day,
    granularity: z.enum(GRANULARITIES),
    series: z
      .array(HistoryPointSchema)
      .openapi({ description: "Every day (or week) of the range in order, zero-filled." }),
    totals: z
      .object({
        ...HistoryFields,
        active_days: z.number().int().openapi({ description: "Days of the range with any attempt." }),
      })
      .openapi("ProgressHistoryTotals"),
  })
  .openapi("ProgressHistory");

// ---------------------------------------------------------------------------------------------
// GET /api/cefr/report

const METHOD_DESCRIPTION =
  `A skill reaches a level when the learner has at least ${CEFR_EVIDENCE_NEEDED} attempts at items of that level with a mean score of at least ${CEFR_ACCURACY_NEEDED}, ` +
  "and every lower level is reached too (levels are climbed from A1 without gaps). progress_to_next is the lesser of attempts/" +
  `${CEFR_EVIDENCE_NEEDED} and accuracy/${CEFR_ACCURACY_NEEDED} at the next level, capped at 1. ` +
  "The overall level is the lower median of the levels of the skills with any evidence (a skill below A1 counts below A1).";

export const CefrEvidenceSchema = z
  .object({
    level: Level,
    attempts: z.number().int(),
    correct: z.number().int(),
    accuracy: z.number().openapi({
      example: 0.82,
      description: "Mean score of the attempts at this level, 0–1 to three decimals.",
    }),
  })
  .openapi("CefrEvidence");

export const CefrSkillSchema = z
  .object({
    skill: Skill,
    level: Level.nullable().openapi({ description: "Highest level reached; null before A1." }),
    next_level: Level.nullable().openapi({ description: "The level being worked towards; null at C2." }),
    progress_to_next: z
      .number()
      .openapi({ example: 0.4, description: "0–1 towards next_level (two decimals); 1 at C2." }),
    evidence: z
      .array(CefrEvidenceSchema)
      .openapi({ description: "Attempts per item level, for the levels with any." }),
  })
  .openapi("CefrSkill");

export const CefrReportSchema = z
  .object({
    user_id: z.string(),
    overall_level: Level.nullable(),
    skills: z
      .array(CefrSkillSchema)
      .openapi({ description: `Every skill, in the order ${SKILLS.join(", ")}.` }),
    method: z
      .object({
        evidence_needed: z
          .number()
          .int()
          .openapi({ example: CEFR_EVIDENCE_NEEDED, description: "Attempts needed at a level." }),
        accuracy_needed: z
          .number()
          .openapi({ example: CEFR_ACCURACY_NEEDED, description: "Mean score needed at a level." }),
        levels: z.array(Level),
        description: z.string().openapi({ example: METHOD_DESCRIPTION }),
      })
      .openapi("CefrMethod", {
        description: "How levels are assessed, so that integrators can explain them.",
      }),
  })
  .openapi("CefrReport");

export const CEFR_METHOD = {
  evidence_needed: CEFR_EVIDENCE_NEEDED,
  accuracy_needed: CEFR_ACCURACY_NEEDED,
  levels: [...CEFR_LEVELS],
  description: METHOD_DESCRIPTION,
};

// ---------------------------------------------------------------------------------------------
// GET /api/stats

export const PlatformStatsSchema = z
  .object({
    content: z
      .object({
        courses: z.number().int().openapi({ description: "Published courses." }),
        lessons: z.number().int().openapi({ description: "Lessons of published courses." }),
        training_items: z.number().int().openapi({ description: "Training items of published courses." }),
      })
      .openapi("ContentTotals"),
    active_learners: z
      .object({
        as_of: Day.openapi({ description: "Today in UTC; windows end on this day." }),
        today: z.number().int(),
        last_7_days: z.number().int(),
        last_30_days: z.number().int(),
      })
      .openapi("ActiveLearners", {
        description: "Learners whose last active day (in their own time zone) falls in the window.",
      }),
    activity: z
      .object({
        attempts: z.number().int(),
        items_completed: z.number().int(),
        lessons_completed: z.number().int(),
        courses_completed: z.number().int(),
      })
      .openapi("ActivityTotals", { description: "Since the platform started." }),
    generated_at: Timestamp,
  })
  .openapi("PlatformStats");
