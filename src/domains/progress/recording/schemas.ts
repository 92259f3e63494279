import { z } from "@hono/zod-openapi";
import { dateTime } from "../../../platform/dates";
import { clockNow } from "../../../platform/service/clock";

const MAX_CLOCK_SKEW_MS = 5 * 60 * 1000;
const OLDEST_ACCEPTED_MS = 5 * 365 * 86_400_000;
// Validation runs before any service, so it reads the clock the request's `ctx.now()` reads.

export const AttemptSchema = z
  .strictObject({
    id: z.uuid("must be a UUID").openapi({
      description:
        "Your UUID for this attempt; resending it is harmless: it counts once, and the first recording wins even if the resend's other fields differ.",
      example: "4f1f8f5e-2c7a-4a51-9f64-3f0b0a7f5c11",
    }),
    training_item_id: z.string().min(1).max(64).openapi({ example: "itm_demo_es_a1_01_1_01" }),
    score: z
      .number()
      .min(0, "must be between 0 and 1")
      .max(1, "must be between 0 and 1")
      .openapi({ example: 0.9 }),
    correct: z.boolean(),
    duration_seconds: z.number().int("must be a whole number").min(0).max(86_400).openapi({ example: 35 }),
    occurred_at: dateTime()
      .refine((value) => Date.parse(value) <= clockNow() + MAX_CLOCK_SKEW_MS, {
        message: "must not be in the future",
      })
      .refine((value) => Date.parse(value) >= clockNow() - OLDEST_ACCEPTED_MS, {
        message: "must be within the last 5 years",
      })
      .openapi({
        description:
          "When the attempt happened. Up to 5 minutes ahead of the server's clock is accepted (clock skew) and recorded as the server's now.",
        example: "2026-11-21T09:30:00Z",
      }),
  })
  .openapi("Attempt");

const userIdField = z.string().min(1).optional().openapi({
  description: "Record for this member of your institution (institution admins); defaults to you.",
});

export const RecordAttemptsBody = z
  .union([
    z.strictObject({
      attempts: z
        .array(AttemptSchema)
        .min(1, "must hold at least one attempt")
        .max(100, "must hold at most 100 attempts")
        .superRefine((list, ctx) => {
          const seen = new Map<string, number>();
          list.forEach((a, index) => {
            if (seen.has(a.id))
              ctx.addIssue({
                code: "custom",
                path: [index, "id"],
                message: `repeats attempts.${seen.get(a.id)}.id`,
              });
            else seen.set(a.id, index);
          });
        }),
      user_id: userIdField,
    }),
    // The attempt's fields inlined, not `AttemptSchema.extend(…)`: the generator would write an
    // extension of a strict referenced schema as allOf [Attempt, { user_id } closed], which no body satisfies.
    z.strictObject({ ...AttemptSchema.shape, user_id: userIdField }),
  ])
  .openapi("RecordAttemptsRequest", { description: "One attempt, or `{ attempts: [...] }` with up to 100." });

export const AttemptOutcomeSchema = z
  .object({
    id: z.string(),
    status: z.enum(["recorded", "duplicate"]).openapi({
      description:
        "`duplicate`: this id was recorded before; nothing changed, and this request's values for it were ignored.",
    }),
    xp_gained: z.number().int(),
    item_completed: z.boolean().openapi({ description: "The first passing attempt at this item." }),
    lesson: z
      .object({
        id: z.string(),
        status: z.enum(["not_started", "in_progress", "completed"]),
        items_done: z.number().int(),
        items_total: z.number().int(),
        percent: z.number().int(),
      })
      .nullable(),
    course_completed: z.boolean(),
    achievements_unlocked: z.array(z.string()),
  })
  .openapi("AttemptOutcome");

export const RecordAttemptsResponse = z
  .object({
    data: z
      .array(AttemptOutcomeSchema)
      .openapi({ description: "One outcome per attempt, in request order." }),
    summary: z.object({
      recorded: z.number().int(),
      duplicates: z.number().int(),
      xp_gained: z.number().int(),
      xp_total: z.number().int(),
      lessons_completed: z.array(z.string()),
      courses_completed: z.array(z.string()),
      achievements_unlocked: z.array(z.string()),
      current_streak: z.number().int(),
      events: z
        .array(z.object({ id: z.string(), type: z.string() }))
        .openapi({ description: "Domain events this batch emitted." }),
    }),
  })
  .openapi("RecordAttemptsResponse");
