import { z } from "@hono/zod-openapi";
import { CEFR_LEVELS } from "../../../db/schema";
import { pageQueryShape, pageSchema } from "../../../platform/http/pagination";
import { displayText } from "../../../platform/text";
import { courseFilterShape } from "../../content/schemas";

/** The wire shapes of deep linking: what may be linked, and the response the instructor asks for. */

export const DeepLinkingLaunchParam = z.object({
  launch: z
    .string()
    .min(1)
    .max(100)
    .openapi({ param: { name: "launch", in: "path" }, example: "lti_01JD3Q8W2X4Y5Z6A7B8C9D0E1K" }),
});

/** Which database the selection page reads the launch in: the institution the callback's redirect names. */
export const SelectionPageQuery = z.object({
  institution: z.string().max(100).optional().openapi({
    description:
      "The launch's institution, as the callback's redirect names it (the page is read where the institution lives); without it, the launch is looked up in the first database.",
    example: "ins_01JD3Q8W2X4Y5Z6A7B8C9D0E1F",
  }),
});

/** The filters of `GET /api/courses` (less `published`: only published content can be linked). */
export const ListItemsQuery = z.object({ ...pageQueryShape, ...courseFilterShape });

const LessonItem = z
  .object({
    id: z.string().openapi({ example: "les_demo_es_a1_01" }),
    title: z.string(),
    position: z.number().int(),
    cefr_level: z.enum(CEFR_LEVELS),
  })
  .openapi("LtiDeepLinkingLesson");

export const DeepLinkingItemSchema = z
  .object({
    id: z.string().openapi({ example: "crs_demo_es_a1" }),
    slug: z.string(),
    title: z.string(),
    description: z.string(),
    target_language: z.string(),
    cefr_from: z.enum(CEFR_LEVELS),
    cefr_to: z.enum(CEFR_LEVELS),
    lessons: z.array(LessonItem).openapi({
      description: "The course's lessons in order; each may be linked on its own (`lesson_id`).",
    }),
  })
  .openapi("LtiDeepLinkingCourse");

export const DeepLinkingItemPageSchema = pageSchema(DeepLinkingItemSchema, "LtiDeepLinkingCoursePage");

const ITEM_ID = /^[A-Za-z0-9_-]{1,100}$/;
const ItemId = (what: string) =>
  z
    .string()
    .regex(ITEM_ID, "must be an id (letters, digits, `_` and `-`, at most 100)")
    .openapi({ description: `The published ${what} to link.` });

export const LineItemRequest = z
  .strictObject({
    score_maximum: z.number().positive("must be > 0").max(1_000_000, "must be at most 1000000").openapi({
      example: 10,
    }),
    label: displayText(
      { max: 200 },
      { description: "The column's name; default: the item's title." },
    ).optional(),
    tag: z.string().trim().min(1).max(200).optional().openapi({
      description: "The line item's `tag`, for the tool's own bookkeeping.",
    }),
  })
  .openapi({ description: "Ask the platform to create a gradebook column (AGS line item) for the link." });

export const ResponseItem = z
  .strictObject({
    course_id: ItemId("course").optional(),
    lesson_id: ItemId("lesson").optional(),
    title: displayText(
      { max: 200 },
      { description: "The link's title in the platform; default: the course's or lesson's." },
    ).optional(),
    line_item: LineItemRequest.optional(),
  })
  .superRefine((item, ctx) => {
    if ((item.course_id === undefined) === (item.lesson_id === undefined))
      ctx.addIssue({
        code: "custom",
        path: [item.course_id === undefined ? "course_id" : "lesson_id"],
        message: "name exactly one of course_id and lesson_id",
      });
  })
  .openapi("LtiDeepLinkingItemRequest");

export const ResponseBody = z
  .strictObject({
    items: z.array(ResponseItem).max(100, "must be at most 100 items").openapi({
      description:
        "What to link, in order. An empty list answers the platform that nothing was chosen (the instructor cancelled); it uses up the response like any other.",
    }),
  })
  .openapi("LtiDeepLinkingResponseRequest");

/** The form body's fields (documentation only: a form is read into `ResponseBody` and validated as it). */
export const RESPONSE_FORM_SCHEMA = {
  type: "object" as const,
  properties: {
    course_id: {
      type: "array" as const,
      items: { type: "string" as const },
      description: "Repeatable: a course to link (the items keep the order of the fields).",
    },
    lesson_id: {
      type: "array" as const,
      items: { type: "string" as const },
      description: "Repeatable: a lesson to link.",
    },
    score_maximum: {
      type: "string" as const,
      description: "When sent (a number > 0), every chosen item asks for a line item with this maximum.",
    },
  },
};

export const ResponseAnswerSchema = z
  .object({
    return_url: z.string().openapi({
      description: "The platform's `deep_link_return_url`: post the JWT there as the form field `JWT`.",
    }),
    jwt: z.string().openapi({ description: "The signed `LtiDeepLinkingResponse`." }),
  })
  .openapi("LtiDeepLinkingResponseJwt");
