import { z } from "@hono/zod-openapi";
import { Accuracy, Day, Minutes, Skill } from "../schemas";

/** Wire shapes of the learning insights. */

// ---------------------------------------------------------------------------------------------
// GET /api/learning-insights

export const INSIGHT_MIN_ATTEMPTS = 5;
export const TREND_WEEKS = 8;
export const TREND_THRESHOLD = 0.01;
export const MAX_RECOMMENDATIONS = 3;
export const WEEKDAYS = [
  "monday",
  "tuesday",
  "wednesday",
  "thursday",
  "friday",
  "saturday",
  "sunday",
] as const;
export const TREND_LABELS = ["improving", "steady", "declining"] as const;
export const RECOMMENDATION_REASONS = ["continue_course", "matches_level", "first_steps"] as const;

export const SkillAccuracySchema = z
  .object({
    skill: Skill,
    attempts: z.number().int(),
    accuracy: z.number().openapi({
      example: 0.81,
      description:
        "Mean score over every attempt of the skill, 0–1 to three decimals (as in the CEFR report).",
    }),
  })
  .openapi("SkillAccuracy");

export const RecommendationSchema = z
  .object({
    course_id: z.string(),
    course_title: z.string(),
    lesson_id: z.string(),
    lesson_title: z.string(),
    position: z.number().int().openapi({ description: "The lesson's position in the course." }),
    reason_code: z.enum(RECOMMENDATION_REASONS).openapi({
      description:
        "`continue_course`: the first lesson not yet completed of a course you started; `matches_level`: the first lesson of a course whose CEFR range covers your overall level; `first_steps`: no level yet, a course covering A1.",
    }),
    reason: z.string().openapi({ example: "continue Spanish for travellers: next lesson after Greetings" }),
  })
  .openapi("LessonRecommendation");

export const LearningInsightsSchema = z
  .object({
    user_id: z.string(),
    skills: z
      .object({
        min_attempts: z.number().int().openapi({
          example: INSIGHT_MIN_ATTEMPTS,
          description: "Skills with fewer attempts are left out.",
        }),
        ranked: z.array(SkillAccuracySchema).openapi({
          description: "Skills with enough attempts, best first (ties: more attempts, then name).",
        }),
        // A union with null, not `.nullable()`: the generator would write a referenced schema's
        // `.nullable()` as allOf [the reference, type object-or-null], which no null satisfies.
        strongest: z.union([SkillAccuracySchema, z.null()]).openapi({
          description: "Null when no skill qualifies.",
        }),
        weakest: z.union([SkillAccuracySchema, z.null()]).openapi({
          description: "Null unless at least two skills qualify.",
        }),
      })
      .openapi("SkillInsights"),
    accuracy_trend: z
      .object({
        weeks: z
          .array(
            z.object({
              week: Day.openapi({ description: "Monday of the week." }),
              attempts: z.number().int(),
              correct: z.number().int(),
              accuracy: Accuracy,
            }),
          )
          .openapi({
            description: `The last ${TREND_WEEKS} weeks, oldest first, ending with the current one.`,
          }),
        slope: z.number().nullable().openapi({
          example: 0.021,
          description:
            "Least-squares change of weekly accuracy per week over the weeks with attempts; null with fewer than two.",
        }),
        label: z.enum(TREND_LABELS).openapi({
          description: `\`improving\` when slope ≥ ${TREND_THRESHOLD}, \`declining\` when ≤ −${TREND_THRESHOLD}, otherwise (or without a slope) \`steady\`.`,
        }),
      })
      .openapi("AccuracyTrend"),
    study_time: z
      .object({
        total_minutes: Minutes,
        by_weekday: z
          .array(z.object({ weekday: z.enum(WEEKDAYS), minutes: Minutes }))
          .openapi({ description: "Seven entries, Monday first, in the learner's time zone." }),
        by_hour: z
          .array(z.object({ hour: z.number().int(), minutes: Minutes }))
          .openapi({ description: "24 entries, hour 0–23 of the learner's local day." }),
      })
      .openapi("StudyTime"),
    recommendations: z
      .array(RecommendationSchema)
      .openapi({ description: `Up to ${MAX_RECOMMENDATIONS} lessons to do next.` }),
  })
  .openapi("LearningInsights");
