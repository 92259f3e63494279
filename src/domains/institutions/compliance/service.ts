import { eq } from "drizzle-orm";
import { COMPLIANCE_TYPES, type ComplianceType, complianceDocuments } from "../../../db/schema";
import { enforce } from "../../../platform/auth/policy";
import { type FieldError, validationError } from "../../../platform/errors";
import { nowIso } from "../../../platform/ids";
import type { PrincipalContext } from "../../../platform/service/context";
import { findInstitution, institutionInScope } from "../access";
import { mayRecordCompliance } from "../policy";
import type { ComplianceStatus, PutComplianceDocumentInput } from "./schemas";

/** Required unless platform staff say otherwise: every customer signs a DPA and GDPR paperwork. */
export const REQUIRED_BY_DEFAULT: readonly ComplianceType[] = ["dpa", "gdpr"];

type StoredDocument = typeof complianceDocuments.$inferSelect;

export interface ComplianceDocument {
  type: ComplianceType;
  required: boolean;
  status: ComplianceStatus;
  signed_at: string | null;
  expires_at: string | null;
  document_url: string | null;
  updated_at: string | null;
}

/** A stored document as read at `now`: a document past `expires_at` reads `expired`. */
export function presentDocument(
  type: ComplianceType,
  row: StoredDocument | undefined,
  now: string,
): ComplianceDocument {
  if (!row)
    return {
      type,
      required: REQUIRED_BY_DEFAULT.includes(type),
      status: "not_started",
      signed_at: null,
      expires_at: null,
      document_url: null,
      updated_at: null,
    };
  const expired = row.status === "signed" && row.expiresAt !== null && row.expiresAt <= now;
  return {
    type,
    required: row.required,
    status: expired ? "expired" : row.status,
    signed_at: row.signedAt,
    expires_at: row.expiresAt,
    document_url: row.documentUrl,
    updated_at: row.updatedAt,
  };
}

export function overallStatus(documents: ComplianceDocument[]): "complete" | "action_required" {
  const done = documents.every((d) => !d.required || d.status === "signed" || d.status === "not_applicable");
  return done ? "complete" : "action_required";
}

/** Every document type of the institution the caller may act on, as it reads now, and the overall status. */
export async function readCompliance(ctx: PrincipalContext, institutionId: string) {
  await institutionInScope(ctx, institutionId);
  const rows = await ctx.db
    .select()
    .from(complianceDocuments)
    .where(eq(complianceDocuments.institutionId, institutionId));
  const now = nowIso(ctx.now());
  const byType = new Map(rows.map((r) => [r.type, r]));
  const documents = COMPLIANCE_TYPES.map((type) => presentDocument(type, byType.get(type), now));
  return { institution_id: institutionId, status: overallStatus(documents), documents };
}

function checkDates(input: PutComplianceDocumentInput, now: string): FieldError[] {
  const errors: FieldError[] = [];
  const signedAt = input.signed_at ? nowIso(Date.parse(input.signed_at)) : null;
  const expiresAt = input.expires_at ? nowIso(Date.parse(input.expires_at)) : null;
  if (input.status === "signed" && !signedAt)
    errors.push({ path: "signed_at", message: 'is required with status "signed"' });
  if (signedAt && signedAt > now) errors.push({ path: "signed_at", message: "must not be in the future" });
  if (signedAt && expiresAt && expiresAt <= signedAt)
    errors.push({ path: "expires_at", message: "must be after signed_at" });
  return errors;
}

/** Platform staff record one document's state (`mayRecordCompliance`); the whole document is replaced (PUT). */
export async function putComplianceDocument(
  ctx: PrincipalContext,
  {
    institutionId,
    type,
    input,
  }: { institutionId: string; type: ComplianceType; input: PutComplianceDocumentInput },
): Promise<ComplianceDocument> {
  // Loaded first: an unknown institution is 404 before the rule is asked, as another's is.
  await findInstitution(ctx, institutionId);
  enforce(mayRecordCompliance(ctx.principal, { id: institutionId }));
  const now = nowIso(ctx.now());
  const errors = checkDates(input, now);
  if (errors.length > 0) throw validationError(errors);
  const { db } = ctx;
  const row: StoredDocument = {
    institutionId,
    type,
    required: input.required ?? REQUIRED_BY_DEFAULT.includes(type),
    status: input.status,
    signedAt: input.signed_at ? nowIso(Date.parse(input.signed_at)) : null,
    expiresAt: input.expires_at ? nowIso(Date.parse(input.expires_at)) : null,
    documentUrl: input.document_url ?? null,
    updatedAt: now,
  };
  const { institutionId: _i, type: _t, ...replaced } = row;
  await db
    .insert(complianceDocuments)
    .values(row)
    .onConflictDoUpdate({
      target: [complianceDocuments.institutionId, complianceDocuments.type],
      set: replaced,
    });
  return presentDocument(type, row, now);
}
