import { z } from "@hono/zod-openapi";
import { DATE_TIME_BOUNDS_NOTE, dateTime as dateTimeParam } from "../../platform/dates";
import { SUBSCRIBABLE_TYPES } from "../../platform/events";
import { pageQueryShape, pageSchema } from "../../platform/http/pagination";

export const EventSchema = z
  .object({
    id: z.string().openapi({ example: "evt_01JD3Q8W2X4Y5Z6A7B8C9D0E1M" }),
    type: z.string().openapi({ example: "lesson.completed" }),
    created_at: z.string(),
    data: z
      .record(z.string(), z.unknown())
      .openapi({ description: "Exactly the `data` a webhook delivery of this event carries." }),
  })
  .openapi("Event");

export const EventPageSchema = pageSchema(EventSchema, "EventPage");

const dateTime = (description: string) =>
  dateTimeParam()
    .optional()
    .openapi({ description: `${description} ${DATE_TIME_BOUNDS_NOTE}` });

export const ListEventsQuery = z
  .object({
    ...pageQueryShape,
    type: z
      .enum(SUBSCRIBABLE_TYPES as [string, ...string[]])
      .optional()
      .openapi({ description: "Only events of this type." }),
    from: dateTime("Events created at or after this time (default: 30 days ago, the retention)."),
    to: dateTime("Events created before this time."),
  })
  .refine((q) => !q.from || !q.to || Date.parse(q.from) < Date.parse(q.to), {
    message: "must be after `from`",
    path: ["to"],
  });

export const EventIdParam = z.object({
  id: z
    .string()
    .min(1)
    .openapi({ param: { name: "id", in: "path" }, example: "evt_01JD3Q8W2X4Y5Z6A7B8C9D0E1M" }),
});
