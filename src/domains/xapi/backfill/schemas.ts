import { z } from "@hono/zod-openapi";
import { XAPI_BACKFILL_STATUSES } from "../../../db/schema";
import { dateTime } from "../../../platform/dates";
import { pageSchema } from "../../../platform/http/pagination";

/** How far back a back-fill reaches: the forwarding log keeps statements as long (90 days). */
export const BACKFILL_WINDOW_DAYS = 90;

export const CreateBackfillBody = z
  .strictObject({
    since: dateTime().openapi({
      description: `Forward the activity from this instant (RFC 3339, \`Z\` or an offset) up to the request's time. At most ${BACKFILL_WINDOW_DAYS} days ago, and not in the future.`,
      example: "2026-11-01T00:00:00Z",
    }),
  })
  .openapi("CreateXapiBackfillRequest");
export type CreateBackfillInput = z.infer<typeof CreateBackfillBody>;

export const XapiBackfillSchema = z
  .object({
    id: z.string().openapi({ example: "xbf_01JD3Q8W2X4Y5Z6A7B8C9D0E1J" }),
    endpoint_id: z.string().openapi({ example: "xep_01JD3Q8W2X4Y5Z6A7B8C9D0E1H" }),
    since: z
      .string()
      .openapi({ description: "The window's start (UTC, to the second).", example: "2026-11-01T00:00:00Z" }),
    until: z.string().openapi({
      description:
        "The window's end: the request's time. Activity after it reaches the endpoint as it happens.",
      example: "2026-11-21T09:30:00Z",
    }),
    status: z.enum(XAPI_BACKFILL_STATUSES).openapi({
      description:
        "`queued` (waiting to start), `running`, `completed` (everything in the window was offered), `failed` (`error` says why).",
    }),
    statements_queued: z.number().int().openapi({
      description:
        "Statements this back-fill queued for the endpoint so far: new ones, and failed ones sent again. Activity already forwarded is not counted (its statement exists and is not sent twice).",
    }),
    error: z.string().nullable().openapi({ description: "Why it failed; null otherwise." }),
    created_at: z.string(),
    completed_at: z.string().nullable().openapi({ description: "When it completed or failed." }),
  })
  .openapi("XapiBackfill");

export const XapiBackfillPageSchema = pageSchema(XapiBackfillSchema, "XapiBackfillPage");

export const XapiBackfillParams = z.object({
  id: z
    .string()
    .min(1)
    .openapi({ param: { name: "id", in: "path" }, example: "xep_01JD3Q8W2X4Y5Z6A7B8C9D0E1H" }),
  backfill: z
    .string()
    .min(1)
    .openapi({ param: { name: "backfill", in: "path" }, example: "xbf_01JD3Q8W2X4Y5Z6A7B8C9D0E1J" }),
});
