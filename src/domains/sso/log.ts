import { and, desc, eq, type SQL } from "drizzle-orm";
import { type SsoSignInStatus, type SsoType, ssoSignIns } from "../../db/schema";
import { type PageRequest, pageBounds, pageWithTotal } from "../../platform/http/pagination";
import { newId, nowIso } from "../../platform/ids";
import type { PrincipalContext, ServiceContext } from "../../platform/service/context";
import { institutionInScope } from "../institutions/access";
import type { SsoRefusal } from "./refusal";

/** The SSO log: every sign-in through an institution's IdP, accepted or refused, and why. */
export type SignInRow = typeof ssoSignIns.$inferSelect;

/** A refused sign-in's entry (written on its own: nothing else of the refusal is kept). */
export async function recordRefusal(
  ctx: ServiceContext,
  input: { institutionId: string; protocol: SsoType; refusal: SsoRefusal },
): Promise<SignInRow> {
  const { refusal } = input;
  const row: SignInRow = {
    id: newId("sso"),
    institutionId: input.institutionId,
    protocol: input.protocol,
    status: "refused",
    reason: refusal.reason,
    detail: refusal.message,
    subject: refusal.person.subject ?? null,
    email: refusal.person.email ?? null,
    userId: refusal.person.userId ?? null,
    provisioned: false,
    requestId: ctx.requestId ?? null,
    createdAt: nowIso(ctx.now()),
  };
  await ctx.db.insert(ssoSignIns).values(row).run();
  return row;
}

/** An accepted sign-in's entry, to write in the batch that ends the sign-in. */
export function succeededSignIn(
  ctx: ServiceContext,
  input: {
    institutionId: string;
    protocol: SsoType;
    subject: string;
    email: string;
    userId: string;
    provisioned: boolean;
  },
): SignInRow {
  return {
    id: newId("sso"),
    institutionId: input.institutionId,
    protocol: input.protocol,
    status: "succeeded",
    reason: null,
    detail: null,
    subject: input.subject,
    email: input.email,
    userId: input.userId,
    provisioned: input.provisioned,
    requestId: ctx.requestId ?? null,
    createdAt: nowIso(ctx.now()),
  };
}

export function presentSignIn(row: SignInRow) {
  return {
    id: row.id,
    protocol: row.protocol,
    status: row.status,
    reason: row.reason,
    detail: row.detail,
    subject: row.subject,
    email: row.email,
    user_id: row.userId,
    provisioned: row.provisioned,
    request_id: row.requestId,
    created_at: row.createdAt,
  };
}

/** A page of the institution's SSO log, newest first (ties by id), with the total. */
export async function listSignIns(
  ctx: PrincipalContext,
  input: {
    institutionId: string;
    filters: { status?: SsoSignInStatus; user_id?: string; reason?: string };
    page: PageRequest;
  },
) {
  await institutionInScope(ctx, input.institutionId);
  const { filters, page } = input;
  const { db } = ctx;
  const conditions: SQL[] = [eq(ssoSignIns.institutionId, input.institutionId)];
  if (filters.status) conditions.push(eq(ssoSignIns.status, filters.status));
  if (filters.user_id) conditions.push(eq(ssoSignIns.userId, filters.user_id));
  if (filters.reason) conditions.push(eq(ssoSignIns.reason, filters.reason));
  const where = and(...conditions);
  const { limit, offset } = pageBounds(page);
  return pageWithTotal(
    db,
    db
      .select()
      .from(ssoSignIns)
      .where(where)
      .orderBy(desc(ssoSignIns.createdAt), desc(ssoSignIns.id))
      .limit(limit)
      .offset(offset),
    ssoSignIns,
    where,
  );
}
