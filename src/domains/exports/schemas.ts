import { z } from "@hono/zod-openapi";
import { EXPORT_STATUSES, EXPORT_TYPES } from "../../db/schema";
import { DATE_TIME_BOUNDS_NOTE, dateTime } from "../../platform/dates";
import { pageQueryShape, pageSchema } from "../../platform/http/pagination";
import { ProblemSchema } from "../../platform/openapi-problems";
import { SOURCES } from "./sources";

/** Every export type with its CSV columns, generated from the sources so the document cannot drift. */
export function columnsDocumentation(): string {
  return EXPORT_TYPES.map((type) => {
    const source = SOURCES[type];
    const columns = source.columns.map((c) => `| \`${c.name}\` | ${c.description} |`).join("\n");
    return `**\`${type}\`**: ${source.summary}; ordered ${source.order}; \`from\`/\`to\` filter on \`${source.rangeColumn}\`.\n\n| column | meaning |\n|---|---|\n${columns}`;
  }).join("\n\n");
}

export const ExportTypeSchema = z.enum(EXPORT_TYPES).openapi({
  description:
    "`learner_progress`: one row per learner and course; `completions`: one row per completed lesson or course; `activity`: one row per attempt.",
});

export const ExportStatusSchema = z.enum(EXPORT_STATUSES).openapi({
  description:
    "`queued` → `processing` → `completed` or `failed`; a completed export is `expired` from its `expires_at` on (no `download_url`, the download answers 410), and its file is deleted within a minute or so.",
});

const timestamp = z.string().openapi({ example: "2026-11-21T09:30:00Z" });

export const ExportFiltersSchema = z
  .object({
    from: timestamp.optional().openapi({ description: "Inclusive lower bound (second precision)." }),
    to: timestamp.optional().openapi({ description: "Exclusive upper bound (second precision)." }),
    course_id: z.string().optional(),
    user_ids: z.array(z.string()).optional(),
  })
  .openapi("ExportFilters");

export const ExportSchema = z
  .object({
    id: z.string().openapi({ example: "exp_01JD3Q8W2X4Y5Z6A7B8C9D0E1F" }),
    type: ExportTypeSchema,
    filters: ExportFiltersSchema,
    status: ExportStatusSchema,
    row_count: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Data rows in the file (the header not counted); null until completed." }),
    byte_size: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Size of the file in bytes; null until completed." }),
    progress: z.number().int().openapi({ description: "Rows written so far." }),
    error: z.string().nullable().openapi({ description: "Why the export failed; null unless `failed`." }),
    requested_by: z.string().openapi({ description: "The user who requested it." }),
    created_at: timestamp,
    started_at: z.string().nullable(),
    completed_at: z.string().nullable(),
    expires_at: z.string().nullable().openapi({
      description:
        "When a completed export's retention ends: from then on it is `expired` and its file is deleted.",
    }),
    download_url: z
      .url()
      .nullable()
      .openapi({ description: "Where to download the file (an absolute URL); null unless `completed`." }),
  })
  .openapi("Export");

export const ExportPageSchema = pageSchema(ExportSchema, "ExportPage");

export const ListExportsQuery = z.object({
  ...pageQueryShape,
  status: ExportStatusSchema.optional().openapi({
    param: { name: "status", in: "query" },
    description:
      "Only exports in this status, as the API shows it: `completed` leaves out those past `expires_at`, `expired` includes them.",
  }),
  type: ExportTypeSchema.optional().openapi({ param: { name: "type", in: "query" } }),
});

export const MAX_USER_IDS = 100;

export const CreateExportBody = z
  .strictObject({
    type: ExportTypeSchema,
    from: dateTime()
      .optional()
      .openapi({
        description: `Only rows at or after this instant (see each type for the column). ${DATE_TIME_BOUNDS_NOTE}`,
      }),
    to: dateTime()
      .optional()
      .openapi({
        description: `Only rows before this instant; must be after \`from\`. ${DATE_TIME_BOUNDS_NOTE}`,
      }),
    course_id: z.string().min(1).max(200).optional().openapi({ description: "Only this course." }),
    user_ids: z
      .array(z.string().min(1).max(200))
      .min(1, "must list at least one user")
      .max(MAX_USER_IDS, `must list at most ${MAX_USER_IDS} users`)
      .optional()
      .openapi({
        description: `Only these learners (at most ${MAX_USER_IDS}), each a member of your institution.`,
      }),
  })
  .superRefine((body, ctx) => {
    if (body.from && body.to && Date.parse(body.to) <= Date.parse(body.from)) {
      ctx.addIssue({ code: "custom", path: ["to"], message: "must be after from" });
    }
  })
  .openapi("CreateExportRequest");

export const ExportIdParam = z.object({
  id: z
    .string()
    .min(1)
    .openapi({ param: { name: "id", in: "path" }, example: "exp_01JD3Q8W2X4Y5Z6A7B8C9D0E1F" }),
});

export const DownloadQuery = z.object({
  bom: z
    .enum(["true", "false"])
    .optional()
    .openapi({
      param: { name: "bom", in: "query" },
      description: "`true` prepends a UTF-8 byte-order mark, for Excel.",
    }),
});

/** The download's 409: the export's state as data, besides `detail`'s prose. */
export const ExportConflictProblemSchema = ProblemSchema.extend({
  export_status: z.enum(["queued", "processing", "failed"]).openapi({
    description:
      "The export's status: `queued` or `processing` (`export_not_ready`), `failed` (`export_failed`).",
  }),
  progress: z.number().int().openapi({ description: "Rows written so far.", example: 15000 }),
}).openapi("ExportConflictProblem", {
  description:
    "A problem about an export that cannot be downloaded (yet), with its status and progress as extension members.",
});
