import { z } from "@hono/zod-openapi";
import { COMPLIANCE_TYPES, STORED_COMPLIANCE_STATUSES } from "../../../db/schema";
import { DATE_TIME_BOUNDS_NOTE, dateTime } from "../../../platform/dates";

export const COMPLIANCE_STATUSES = [...STORED_COMPLIANCE_STATUSES, "expired"] as const;
export type ComplianceStatus = (typeof COMPLIANCE_STATUSES)[number];

const instant = z.string().openapi({ example: "2026-11-21T09:30:00Z" });

export const ComplianceTypeSchema = z.enum(COMPLIANCE_TYPES).openapi({
  description:
    "`dpa`: data processing agreement; `gdpr`: GDPR documentation; `ferpa`: FERPA (US student records); `coppa`: COPPA (US children under 13); `soc2_report`: our SOC 2 report, shared under NDA; `vpat`: accessibility conformance report.",
});

export const ComplianceDocumentSchema = z
  .object({
    type: ComplianceTypeSchema,
    required: z.boolean().openapi({ description: "Whether the institution's overall status waits on it." }),
    status: z.enum(COMPLIANCE_STATUSES).openapi({
      description:
        "`not_started` → `in_review` → `signed`, or `not_applicable`. A signed document reads `expired` from its `expires_at` on, without anybody writing it.",
    }),
    signed_at: instant.nullable(),
    expires_at: instant.nullable(),
    document_url: z.string().nullable().openapi({ example: "https://trust.lingua.example/acme/dpa.pdf" }),
    updated_at: instant.nullable().openapi({ description: "Null for a document nobody has recorded yet." }),
  })
  .openapi("ComplianceDocument");

export const ComplianceSchema = z
  .object({
    institution_id: z.string(),
    status: z.enum(["complete", "action_required"]).openapi({
      description:
        "`complete` when every required document is `signed` (and not expired) or `not_applicable`; otherwise `action_required`.",
    }),
    documents: z.array(ComplianceDocumentSchema).openapi({ description: "Every type, in a fixed order." }),
  })
  .openapi("Compliance");

export const ComplianceParams = z.object({
  id: z.string().openapi({ param: { name: "id", in: "path" }, example: "ins_acme" }),
});

export const ComplianceDocumentParams = ComplianceParams.extend({
  type: ComplianceTypeSchema.openapi({ param: { name: "type", in: "path" } }),
});

export const PutComplianceDocumentBody = z
  .strictObject({
    status: z.enum(STORED_COMPLIANCE_STATUSES).openapi({
      description: "`expired` is not written: it is read from `expires_at`.",
    }),
    required: z.boolean().optional().openapi({
      description: "Defaults to the type's default (`dpa` and `gdpr` required, the others not).",
    }),
    signed_at: dateTime()
      .nullable()
      .optional()
      .openapi({
        description: `Required with \`status: "signed"\`; not in the future. ${DATE_TIME_BOUNDS_NOTE}`,
      }),
    expires_at: dateTime()
      .nullable()
      .optional()
      .openapi({ description: `After \`signed_at\` when both are given. ${DATE_TIME_BOUNDS_NOTE}` }),
    document_url: z
      .url({ protocol: /^https$/, message: "must be an https URL" })
      .max(2048)
      .nullable()
      .optional(),
  })
  .openapi("PutComplianceDocument");
export type PutComplianceDocumentInput = z.infer<typeof PutComplianceDocumentBody>;
