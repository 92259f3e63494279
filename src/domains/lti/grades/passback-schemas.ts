import { z } from "@hono/zod-openapi";
import { PASSBACK_STATUSES } from "../../../db/schema";

/** Grade passback: the score a caller sends for a launch, and the passback as it is recorded and answered. */

export const ACTIVITY_PROGRESS = ["Initialized", "Started", "InProgress", "Submitted", "Completed"] as const;
export const GRADING_PROGRESS = ["FullyGraded", "Pending", "PendingManual", "Failed", "NotReady"] as const;

export const PassbackBody = z
  .strictObject({
    score_given: z.number().min(0, "must be >= 0").openapi({ example: 8.5 }),
    score_maximum: z.number().positive("must be > 0").openapi({ example: 10 }),
    activity_progress: z.enum(ACTIVITY_PROGRESS).default("Completed"),
    grading_progress: z.enum(GRADING_PROGRESS).default("FullyGraded"),
    comment: z.string().max(4000, "must be at most 4000 characters").nullable().optional(),
    line_item_url: z.string().max(2048).optional().openapi({
      example: "https://canvas.example.edu/api/lti/courses/42/line_items/7",
      description:
        "The line item (an `id` from `GET /api/integrations/lti-launches/{launch}/line-items`) to grade instead of the launch's own: a line item of the launch's context — the launch's `lineitem`, or a URL below its `lineitems` URL on the same origin; anything else is `422`. The launch needs the score scope and a `lineitems` URL.",
    }),
  })
  .openapi("LtiGradePassbackRequest");

export const PassbackSchema = z
  .object({
    id: z.string().openapi({ example: "lpb_01JD3Q8W2X4Y5Z6A7B8C9D0E1M" }),
    launch_id: z.string(),
    source: z.enum(["manual", "automatic"]).openapi({
      description: "`automatic`: sent for a `lesson.completed` / `course.completed` event (`event_id`).",
    }),
    event_id: z.string().nullable(),
    line_item_url: z.string().nullable().openapi({
      description: "The line item the grade went to when the request named one; null: the launch's own.",
    }),
    status: z.enum(PASSBACK_STATUSES).openapi({
      description:
        "`pending` (queued), `retrying` (the platform failed or timed out; a retry is scheduled), `succeeded`, `failed` (rejected by the platform, or retries used up).",
    }),
    score_given: z.number().nullable(),
    score_maximum: z.number().nullable(),
    activity_progress: z.enum(ACTIVITY_PROGRESS),
    grading_progress: z.enum(GRADING_PROGRESS),
    comment: z.string().nullable(),
    timestamp: z
      .string()
      .openapi({ description: "The score's `timestamp` as sent (the same on every retry)." }),
    attempt_count: z.number().int(),
    platform_status: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "HTTP status of the platform's last answer; null when none came." }),
    last_error: z.string().nullable(),
    sent_at: z.string().nullable().openapi({ description: "When the platform accepted the score." }),
    created_at: z.string(),
  })
  .openapi("LtiPassback");
