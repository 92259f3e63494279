import { z } from "@hono/zod-openapi";
import { Day, Timestamp, userIdField } from "../schemas";

/** Wire shapes of the gamification stats and the leaderboards. */

export const MAX_LEADERBOARD_LIMIT = 100;
export const DEFAULT_LEADERBOARD_LIMIT = 10;

export const LEADERBOARD_PERIODS = ["week", "all_time"] as const;
export const LEADERBOARD_SCOPES = ["institution", "platform"] as const;

export const LeaderboardQuery = z.object({
  period: z
    .enum(LEADERBOARD_PERIODS, { message: "must be week or all_time" })
    .default("week")
    .openapi({
      param: { name: "period", in: "query" },
      example: "week",
      description:
        "`week`: XP earned in the current ISO week (Monday to Sunday in each learner's time zone). `all_time`: total XP.",
    }),
  scope: z
    .enum(LEADERBOARD_SCOPES, { message: "must be institution or platform" })
    .optional()
    .openapi({
      param: { name: "scope", in: "query" },
      example: "institution",
      description:
        "`institution`: the learner's institution (default). `platform`: every learner (default for platform staff).",
    }),
  limit: z.coerce
    .number()
    .int("must be a whole number")
    .min(1, "must be >= 1")
    .max(MAX_LEADERBOARD_LIMIT, `must be <= ${MAX_LEADERBOARD_LIMIT}`)
    .default(DEFAULT_LEADERBOARD_LIMIT)
    .openapi({
      param: { name: "limit", in: "query" },
      example: DEFAULT_LEADERBOARD_LIMIT,
      description: `How many top entries, 1–${MAX_LEADERBOARD_LIMIT}.`,
    }),
  user_id: userIdField,
});

// ---------------------------------------------------------------------------------------------
// GET /api/gamification/stats

const AchievementBase = {
  code: z.string().openapi({ example: "first_lesson" }),
  name: z.string().openapi({ example: "Lesson learned" }),
  description: z.string().openapi({ example: "Complete a lesson." }),
};

export const GamificationStatsSchema = z
  .object({
    user_id: z.string(),
    xp_total: z.number().int(),
    xp_this_week: z
      .number()
      .int()
      .openapi({ description: "XP earned since Monday of the learner's current week." }),
    week: Day.openapi({ description: "Monday of the learner's current week." }),
    current_streak: z.number().int().openapi({
      description: "Consecutive active days ending today or yesterday (learner's time zone); 0 otherwise.",
    }),
    longest_streak: z.number().int(),
    last_active_day: Day.nullable(),
    achievements: z
      .object({
        unlocked: z
          .array(z.object({ ...AchievementBase, unlocked_at: Timestamp }))
          .openapi({ description: "In the order they were unlocked." }),
        locked: z
          .array(
            z.object({
              ...AchievementBase,
              progress: z.object({ current: z.number().int(), target: z.number().int() }),
            }),
          )
          .openapi({ description: "In catalogue order, with progress towards the target." }),
      })
      .openapi("Achievements"),
  })
  .openapi("GamificationStats");

// ---------------------------------------------------------------------------------------------
// GET /api/gamification/leaderboard

export const ANONYMOUS_NAME = "Anonymous learner";

export const LeaderboardEntrySchema = z
  .object({
    rank: z
      .number()
      .int()
      .openapi({ description: "1 + the number of learners in the scope with more XP (ties share a rank)." }),
    user_id: z.string().nullable().openapi({ description: "Null for an anonymised entry." }),
    display_name: z.string().openapi({ example: "Ana García" }),
    xp: z.number().int(),
    is_me: z.boolean().openapi({ description: "The learner this request is about." }),
  })
  .openapi("LeaderboardEntry");

export const LeaderboardSchema = z
  .object({
    period: z.enum(LEADERBOARD_PERIODS),
    scope: z.enum(LEADERBOARD_SCOPES),
    week: Day.nullable().openapi({
      description: "Monday of the week ranked (period=week); null for all_time.",
    }),
    entries: z
      .array(LeaderboardEntrySchema)
      .openapi({ description: "Learners with XP in the period, most XP first, ties by user id." }),
    me: LeaderboardEntrySchema.openapi({
      description: "Your own entry (or user_id's), with your rank, whether or not you are in `entries`.",
    }),
  })
  .openapi("Leaderboard");
