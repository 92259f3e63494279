import type { z } from "@hono/zod-openapi";
import { and, desc, eq, type SQL } from "drizzle-orm";
import { type LaunchKind, type LaunchStatus, ltiLaunches } from "../../../db/schema";
import { ApiError } from "../../../platform/errors";
import { type PageRequest, pageBounds, pageWithTotal } from "../../../platform/http/pagination";
import { newId, nowIso } from "../../../platform/ids";
import type { PrincipalContext, ServiceContext } from "../../../platform/service/context";
import { ltiInstitution } from "../policy";
import type { LaunchRefusal } from "./refusal";
import type { LaunchSchema } from "./schemas";

/**
 * The launch log: every launch, accepted or refused, as the institution reads it. Grade passback
 * reads a launch's row (`LaunchRow`, `findLaunch`) for its line item and user.
 */
export type LaunchRow = typeof ltiLaunches.$inferSelect;

/** A refused launch: this row is all it records. */
export async function recordRefusal(ctx: ServiceContext, refusal: LaunchRefusal): Promise<LaunchRow> {
  const row: LaunchRow = {
    id: newId("lti"),
    institutionId: refusal.consumer?.institutionId ?? null,
    consumerId: refusal.consumer?.id ?? null,
    status: "failed",
    failureReason: refusal.reason,
    failureDetail: refusal.message,
    deploymentId: null,
    messageType: null,
    sub: null,
    userId: null,
    roles: null,
    context: null,
    resourceLink: null,
    custom: null,
    targetLinkUri: null,
    targetType: null,
    targetId: null,
    targetTitle: null,
    ags: null,
    nrps: null,
    kind: null,
    deepLinking: null,
    deepLinkingRespondedAt: null,
    createdAt: nowIso(ctx.now()),
  };
  await ctx.db.insert(ltiLaunches).values(row).run();
  return row;
}

/** A deep-linking launch's request as the log shows it (the platform's opaque `data` is not shown). */
function presentDeepLinking(row: LaunchRow): z.infer<typeof LaunchSchema>["deep_linking"] {
  const settings = row.deepLinking;
  if (row.kind !== "deep_linking" || !settings) return null;
  const strings = (value: unknown) =>
    Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
  return {
    return_url: String(settings.deep_link_return_url ?? ""),
    accept_types: strings(settings.accept_types),
    accept_presentation_document_targets: strings(settings.accept_presentation_document_targets),
    accept_multiple: settings.accept_multiple !== false,
    accept_lineitem: settings.accept_lineitem !== false,
    title: typeof settings.title === "string" ? settings.title : null,
    text: typeof settings.text === "string" ? settings.text : null,
    responded_at: row.deepLinkingRespondedAt,
  };
}

export function presentLaunch(row: LaunchRow): z.infer<typeof LaunchSchema> {
  return {
    id: row.id,
    status: row.status,
    failure_reason: row.failureReason,
    failure_detail: row.failureDetail,
    consumer_id: row.consumerId,
    deployment_id: row.deploymentId,
    message_type: row.messageType,
    user_id: row.userId,
    sub: row.sub,
    roles: row.roles ?? [],
    context: row.context,
    resource_link: row.resourceLink,
    custom: row.custom,
    target:
      row.targetType && row.targetId
        ? { type: row.targetType, id: row.targetId, title: row.targetTitle }
        : null,
    target_link_uri: row.targetLinkUri,
    ags: row.ags,
    nrps: row.nrps,
    kind: row.kind,
    deep_linking: presentDeepLinking(row),
    created_at: row.createdAt,
  };
}

/** A page of the caller's institution's launches, newest first (ties by id), with the total. */
export async function listLaunches(
  ctx: PrincipalContext,
  input: {
    filters: { consumer_id?: string; user_id?: string; status?: LaunchStatus; kind?: LaunchKind };
    page: PageRequest;
  },
) {
  const { filters, page } = input;
  const { db } = ctx;
  const conditions: SQL[] = [eq(ltiLaunches.institutionId, ltiInstitution(ctx.principal))];
  if (filters.consumer_id) conditions.push(eq(ltiLaunches.consumerId, filters.consumer_id));
  if (filters.user_id) conditions.push(eq(ltiLaunches.userId, filters.user_id));
  if (filters.status) conditions.push(eq(ltiLaunches.status, filters.status));
  if (filters.kind) conditions.push(eq(ltiLaunches.kind, filters.kind));
  const where = and(...conditions);
  const { limit, offset } = pageBounds(page);
  return pageWithTotal(
    db,
    db
      .select()
      .from(ltiLaunches)
      .where(where)
      .orderBy(desc(ltiLaunches.createdAt), desc(ltiLaunches.id))
      .limit(limit)
      .offset(offset),
    ltiLaunches,
    where,
  );
}

/** The caller's institution's launch, or 404 (also for another institution's). */
export function getLaunch(ctx: PrincipalContext, id: string): Promise<LaunchRow> {
  return findLaunch(ctx, ltiInstitution(ctx.principal), id);
}

/** The institution's launch, or 404 (also for another institution's). Grade passback's lookup. */
export async function findLaunch(ctx: ServiceContext, institutionId: string, id: string): Promise<LaunchRow> {
  const row = await ctx.db
    .select()
    .from(ltiLaunches)
    .where(and(eq(ltiLaunches.id, id), eq(ltiLaunches.institutionId, institutionId)))
    .get();
  if (!row) throw new ApiError("not_found", `No LTI launch ${id}.`);
  return row;
}
