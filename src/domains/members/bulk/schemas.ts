import { z } from "@hono/zod-openapi";
import { BULK_MODES, BULK_OUTCOMES, BULK_STATUSES } from "../../../db/schema";
import { MAX_DATA_ROWS } from "./csv";
import { IN_REQUEST_ROWS } from "./jobs";

const flag = (description: string, name: string) =>
  z
    .enum(["true", "false"])
    .default("false")
    .transform((v) => v === "true")
    .openapi({ param: { name, in: "query" }, description });

export const BulkUploadQuery = z.object({
  dry_run: flag("`true`: answer exactly what a real run would do, and write nothing.", "dry_run"),
  mode: z
    .enum(BULK_MODES)
    .default("upsert")
    .openapi({
      param: { name: "mode", in: "query" },
      description:
        "`upsert` (default): create and update the members in the file. `sync`: also suspend invited and active members absent from the file (never the uploader, never the last active admin) — refused with `409 sync_threshold_exceeded` when that would suspend more than 10 % of the invited and active members, unless `force=true`.",
    }),
  force: flag("With `mode=sync`: suspend even more than 10 % of the members.", "force"),
});

export const CSV_FORMAT_DOC = `**The file.** UTF-8 CSV (RFC 4180; a byte-order mark, CRLF, LF or CR line ends and quoted cells with commas, quotes and line breaks are all fine), at most 5 MiB and ${MAX_DATA_ROWS.toLocaleString("en")} data rows, a header row naming the columns in any order and any case:

| column | meaning |
|---|---|
| \`email\` | required; matches an existing member when \`external_id\` does not |
| \`name\` or \`first_name\` + \`last_name\` | the member's name; a new member without one is named after its e-mail |
| \`role\` | \`learner\` (default for new members), \`instructor\` or \`institution_admin\` (also \`student\`, \`teacher\`, \`administrator\`) |
| \`external_id\` | your SIS/HR id; matched first |
| \`groups\` | groups separated by \`;\`; an empty cell clears them, no column leaves them as they are |

Other columns are ignored. A OneRoster 1.1 \`users.csv\` is recognised as well: \`sourcedId\` → external_id, \`givenName\`/\`familyName\` → name, \`email\`, \`role\` (student/teacher/administrator), \`enabledUser\` (\`false\` suspends, \`true\` re-activates).

**What a row does.** It matches a member by \`external_id\`, else by e-mail; a match is \`updated\` (or \`unchanged\` if nothing differs), no match is \`created\` (invited, with an \`invitation_url\` in the report, shown once). Uploading the same file twice changes nothing the second time. A bad row is \`rejected\` with its reasons and never blocks the others: an invalid e-mail, a name, external_id or group that the members API would refuse (name and external_id at most 200 characters, a group at most 100, none with a control or bidirectional formatting character), an unknown role, a role above yours, an e-mail or external_id repeated in the file (the later line, naming the earlier), an e-mail that belongs to another account, no free seat, or a change that would leave no active admin. A whole file that is not UTF-8, empty, without an \`email\` column or with too many rows is \`422\` and nothing is done.

**Sizes.** Up to ${IN_REQUEST_ROWS.toLocaleString("en")} data rows the answer is \`200\` with the finished report; above, \`202\` with \`status: "queued"\` and \`Location\` of the job, processed in the background.`;

export const BulkReportRowSchema = z
  .object({
    line: z.number().int().openapi({
      description:
        "1-based line of the file where the row starts, as an editor numbers it (the header is line 1; CR LF, LF and a lone CR each end a line, inside a quoted cell too).",
    }),
    email: z.string().nullable(),
    external_id: z.string().nullable(),
    outcome: z.enum(BULK_OUTCOMES),
    errors: z.array(z.string()).openapi({ description: "Why the row was rejected; empty otherwise." }),
    member_id: z.string().nullable().openapi({
      description:
        "The member created or updated. Null for rejected and unchanged rows, and in a dry run for a member it would create (a dry run creates nobody, so there is no id); a dry run's updated rows name the existing member.",
    }),
    invitation_url: z.url().nullable().openapi({
      description:
        "Created (invited) members only, single-use, shown once: in the upload's answer (valid 7 days), or for a queued upload the first time the row is read by somebody with `members:write` (issued then, valid 7 days from that read). After `POST …/bulk/{job}/invitations` re-issued the member's invitation, shown again the first time the row is read (for the rows beyond that answer's first page). Null otherwise: in dry runs, for readers with `members:read` only (they use none up), on later reads, and when the member is no longer invited or was re-invited before the row was read.",
    }),
  })
  .openapi("BulkReportRow");

export const BulkCountsSchema = z
  .object({
    created: z.number().int(),
    updated: z.number().int(),
    unchanged: z.number().int(),
    suspended: z.number().int().openapi({ description: "Members suspended by `mode=sync`." }),
    rejected: z.number().int(),
  })
  .openapi("BulkCounts");

export const BulkReportSchema = z
  .object({
    id: z.string().openapi({ example: "blk_01JD3Q8W2X4Y5Z6A7B8C9D0E1F" }),
    status: z.enum(BULK_STATUSES),
    dry_run: z.boolean(),
    mode: z.enum(BULK_MODES),
    total_rows: z.number().int().openapi({ description: "Data rows in the file." }),
    processed_rows: z.number().int().openapi({ description: "Data rows applied so far." }),
    counts: BulkCountsSchema,
    error: z.string().nullable().openapi({ description: "Why the job failed; null unless `failed`." }),
    created_at: z.string(),
    completed_at: z.string().nullable(),
    rejected_csv_url: z.url().openapi({ description: "The rejected rows as CSV, with a `reason` column." }),
    rows: z.array(BulkReportRowSchema).openapi({
      description: "In line order. The upload's answer has every row; GET pages them (`page`, `per_page`).",
    }),
    rows_meta: z
      .object({
        total: z.number().int(),
        per_page: z.number().int(),
        current_page: z.number().int(),
        last_page: z.number().int(),
        next: z.url().nullable(),
      })
      .openapi({ description: "Which rows `rows` holds." }),
  })
  .openapi("BulkReport");

export const BulkJobParams = z.object({
  id: z
    .string()
    .min(1)
    .openapi({ param: { name: "id", in: "path" }, example: "ins_01JD3Q8W2X4Y5Z6A7B8C9D0E1F" }),
  job: z
    .string()
    .min(1)
    .openapi({ param: { name: "job", in: "path" }, example: "blk_01JD3Q8W2X4Y5Z6A7B8C9D0E1F" }),
});

export const MAX_REPORT_ROWS = 1_000;

export const BulkReportQuery = z.object({
  page: z.coerce
    .number()
    .int()
    .min(1, "must be >= 1")
    .default(1)
    .openapi({ param: { name: "page", in: "query" } }),
  per_page: z.coerce
    .number()
    .int()
    .min(1, "must be >= 1")
    .max(MAX_REPORT_ROWS, `must be <= ${MAX_REPORT_ROWS}`)
    .default(MAX_REPORT_ROWS)
    .openapi({
      param: { name: "per_page", in: "query" },
      description: `Rows per page, 1–${MAX_REPORT_ROWS}.`,
    }),
  outcome: z
    .enum(BULK_OUTCOMES)
    .optional()
    .openapi({ param: { name: "outcome", in: "query" }, description: "Only rows with this outcome." }),
});

export const RejectedCsvQuery = z.object({
  bom: z
    .enum(["true", "false"])
    .optional()
    .openapi({
      param: { name: "bom", in: "query" },
      description: "`true` prepends a UTF-8 byte-order mark, for Excel.",
    }),
});

export const ReissuedInvitationSchema = z
  .object({
    line: z.number().int().openapi({ description: "The row's line in the uploaded file." }),
    member_id: z.string(),
    email: z.string().nullable(),
    invitation_url: z.url().openapi({
      description: "Single-use, valid 7 days, shown once; the member's previous link no longer works.",
    }),
  })
  .openapi("ReissuedInvitation");

export const ReissuedInvitationsSchema = z
  .object({
    job_id: z.string().openapi({ example: "blk_01JD3Q8W2X4Y5Z6A7B8C9D0E1F" }),
    reissued: z.number().int().openapi({
      description:
        "Members of the upload who were still invited and got a new invitation (each once); their previous links stopped working.",
    }),
    skipped: z
      .object({
        accepted: z.number().int().openapi({ description: "Active: they accepted an invitation meanwhile." }),
        removed: z.number().int().openapi({ description: "No longer members of the institution." }),
        suspended: z.number().int(),
        role_above_yours: z.number().int().openapi({
          description:
            "Still invited, with a role above yours: left as they are, for somebody who may invite them.",
        }),
      })
      .openapi({ description: "The upload's other created members, by why they got no new invitation." }),
    invitations: z.array(ReissuedInvitationSchema).openapi({
      description: `The new links of the re-issued members among the upload's first ${MAX_REPORT_ROWS.toLocaleString("en")} created rows, in line order.`,
    }),
    next: z.url().nullable().openapi({
      description:
        "More re-issued members than one page: the report's next page of created rows (`GET …/bulk/{job}?outcome=created&per_page=1000&page=2`), which shows their new links the first time it is read, as a queued upload's report does. Null when `invitations` holds them all.",
    }),
  })
  .openapi("ReissuedBulkInvitations");
