import type { z } from "@hono/zod-openapi";
import { and, desc, eq, type SQL } from "drizzle-orm";
import { type LaunchStatus, ltiLaunches } from "../../../db/schema";
import { ApiError } from "../../../platform/errors";
import { type PageRequest, pageBounds, pageWithTotal } from "../../../platform/http/pagination";
import { newId, nowIso } from "../../../platform/ids";
import type { PrincipalContext, ServiceContext } from "../../../platform/service/context";
import { ltiInstitution } from "../policy";
import type { LaunchSchema } from "../schemas";
import type { LaunchRefusal } from "./refusal";

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
    createdAt: nowIso(ctx.now()),
  };
  await ctx.db.insert(ltiLaunches).values(row).run();
  return row;
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
    created_at: row.createdAt,
  };
}

/** A page of the caller's institution's launches, newest first (ties by id), with the total. */
export async function listLaunches(
  ctx: PrincipalContext,
  input: { filters: { consumer_id?: string; user_id?: string; status?: LaunchStatus }; page: PageRequest },
) {
  const { filters, page } = input;
  const { db } = ctx;
  const conditions: SQL[] = [eq(ltiLaunches.institutionId, ltiInstitution(ctx.principal))];
  if (filters.consumer_id) conditions.push(eq(ltiLaunches.consumerId, filters.consumer_id));
  if (filters.user_id) conditions.push(eq(ltiLaunches.userId, filters.user_id));
  if (filters.status) conditions.push(eq(ltiLaunches.status, filters.status));
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
