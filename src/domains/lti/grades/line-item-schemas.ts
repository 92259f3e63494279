import { z } from "@hono/zod-openapi";
import { pageQueryShape, pageSchema } from "../../../platform/http/pagination";
import { displayText } from "../../../platform/text";

/** Line items: the AGS line item service of a launch's context. */

export const LineItemsQuery = z.object({
  ...pageQueryShape,
  resource_id: z
    .string()
    .trim()
    .min(1, "must not be empty")
    .max(255)
    .optional()
    .openapi({
      param: { name: "resource_id", in: "query" },
      example: "crs_01JD3Q8W2X4Y5Z6A7B8C9D0E1S",
      description:
        "Only line items tagged with this resource (a course or lesson id), as the platform filters them.",
    }),
  tag: z
    .string()
    .trim()
    .min(1, "must not be empty")
    .max(255)
    .optional()
    .openapi({
      param: { name: "tag", in: "query" },
      example: "final",
      description: "Only line items with this tag, as the platform filters them.",
    }),
});

export const CreateLineItemBody = z
  .strictObject({
    label: displayText({ max: 255 }, { example: "Unit 3: the past tense" }),
    score_maximum: z.number().positive("must be > 0").max(1_000_000).openapi({ example: 100 }),
    course_id: z.string().min(1).max(64).optional().openapi({ example: "crs_01JD3Q8W2X4Y5Z6A7B8C9D0E1S" }),
    lesson_id: z.string().min(1).max(64).optional().openapi({ example: "les_01JD3Q8W2X4Y5Z6A7B8C9D0E1T" }),
    tag: z.string().trim().min(1, "must not be empty").max(255).optional().openapi({ example: "final" }),
  })
  .refine((body) => (body.course_id === undefined) !== (body.lesson_id === undefined), {
    message: "name exactly one of course_id and lesson_id",
    path: ["course_id"],
  })
  .openapi("LtiLineItemRequest");

export const LineItemSchema = z
  .object({
    id: z.string().openapi({
      description: "The line item's URL at the platform: what `line_item_url` of a grade passback takes.",
      example: "https://canvas.example.edu/api/lti/courses/42/line_items/7",
    }),
    label: z.string().nullable(),
    score_maximum: z.number().nullable(),
    resource_id: z.string().nullable().openapi({
      description:
        "The course or lesson id Lingua tagged it with (AGS `resourceId`); other tools' ids as the platform has them.",
    }),
    tag: z.string().nullable(),
  })
  .openapi("LtiLineItem");

export const LineItemPageSchema = pageSchema(LineItemSchema, "LtiLineItemPage");
