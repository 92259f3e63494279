import { z } from "@hono/zod-openapi";
import { CEFR_LEVELS, SKILLS } from "../../../db/schema";
import { calendarDay, DAY_BOUNDS_NOTE } from "../../../platform/dates";
import { DEFAULT_DAYS, GRANULARITIES, MAX_DAYS } from "./range";

export const AnalyticsParams = z.object({
  id: z.string().openapi({ param: { name: "id", in: "path" }, example: "ins_acme" }),
});

export const AnalyticsQuery = z.object({
  from: calendarDay()
    .optional()
    .openapi({
      description: `First day, inclusive; default ${DEFAULT_DAYS - 1} days before \`to\`. ${DAY_BOUNDS_NOTE}`,
      example: "2026-10-27",
    }),
  to: calendarDay()
    .optional()
    .openapi({
      description: `Last day, inclusive; default today in the institution's time zone. At most ${MAX_DAYS} days from \`from\`. ${DAY_BOUNDS_NOTE}`,
      example: "2026-11-25",
    }),
  granularity: z.enum(GRANULARITIES).default("day").openapi({
    description: "Period of each `series` point: `day`, `week` (Monday to Sunday) or `month`.",
  }),
  group: z.string().min(1).max(200).optional().openapi({
    description: "Only members of this group (class, department): every figure is restricted to them.",
  }),
});

const Levels = z
  .object(
    Object.fromEntries([...CEFR_LEVELS, "none"].map((level) => [level, z.number().int()])) as Record<
      (typeof CEFR_LEVELS)[number] | "none",
      z.ZodNumber
    >,
  )
  .openapi("CefrLevelCounts", { description: "Learners per CEFR level; `none`: no level established yet." });

const Totals = {
  active_learners: z
    .number()
    .int()
    .openapi({ description: "Distinct members with at least one attempt in the range." }),
  minutes: z.number().openapi({ description: "Practice time, to a tenth of a minute." }),
  attempts: z.number().int(),
  lessons_completed: z.number().int(),
};

export const AnalyticsSchema = z
  .object({
    institution: z.object({
      id: z.string(),
      name: z.string(),
      branding: z.object({
        display_name: z.string().nullable(),
        logo_url: z.string().nullable(),
        primary_color: z.string().nullable(),
        accent_color: z.string().nullable(),
      }),
    }),
    range: z.object({
      from: z.string(),
      to: z.string(),
      granularity: z.enum(GRANULARITIES),
      group: z.string().nullable(),
    }),
    generated_at: z.string().openapi({
      description:
        "When these figures were read (UTC). Every recording is counted before its request answers, so they are current as of this instant.",
      example: "2026-11-27T09:30:00Z",
    }),
    totals: z.object({
      members: z
        .number()
        .int()
        .openapi({ description: "Members of the institution (or of the group) now, any role and status." }),
      ...Totals,
      courses_completed: z.number().int(),
      xp: z.number().int(),
    }),
    series: z
      .array(z.object({ date: z.string().openapi({ description: "First day of the period." }), ...Totals }))
      .openapi({
        description:
          "One point per period from the one holding `from` to the one holding `to`, periods without activity as zeros. Active learners of a week or month are distinct over that period.",
      }),
    cefr_distribution: z
      .object({
        overall: Levels,
        skills: z.object(
          Object.fromEntries(SKILLS.map((s) => [s, Levels])) as Record<
            (typeof SKILLS)[number],
            typeof Levels
          >,
        ),
      })
      .openapi({
        description: "The current CEFR level of each member with the `learner` role, overall and per skill.",
      }),
    top_courses: z
      .array(
        z.object({
          course_id: z.string(),
          title: z.string(),
          slug: z.string(),
          active_learners: z.number().int(),
          completions: z
            .number()
            .int()
            .openapi({ description: "Members who completed the course in the range." }),
          lessons_completed: z.number().int(),
          minutes: z.number(),
        }),
      )
      .openapi({
        description: "Up to 10 courses by active learners in the range (then completions, then id).",
      }),
    groups: z
      .array(
        z.object({
          name: z.string(),
          members: z.number().int(),
          ...Totals,
          courses_completed: z.number().int(),
          xp: z.number().int(),
        }),
      )
      .openapi({ description: "The same totals per group, by name; with `group`, only that group." }),
  })
  .openapi("InstitutionAnalytics");
