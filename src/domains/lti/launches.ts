import type { z } from "@hono/zod-openapi";
import { and, desc, eq, type SQL } from "drizzle-orm";
import { courses, type LaunchStatus, lessons, ltiLaunches } from "../../db/schema";
import type { Env } from "../../env";
import { database } from "../../platform/db";
import { ApiError } from "../../platform/errors";
import { type PageRequest, pageBounds, pageWithTotal } from "../../platform/http/pagination";
import { newId, nowIso } from "../../platform/ids";
import { type DisplayTextRule, sanitizeDisplayText, TITLE } from "../../platform/text";
import { visibleCourses } from "../content/service";
import { asRecord, CLAIMS, pick } from "./claims";
import type { ConsumerRow } from "./consumers";
import { usableLineItem } from "./grades/line-item";
import type { LaunchSchema } from "./schemas";
import { LaunchRefusal } from "./validate";

export type LaunchRow = typeof ltiLaunches.$inferSelect;

interface Target {
  type: "course" | "lesson";
  id: string;
  title: string;
}

/**
 * What the launch opens: the custom claims `lingua_course_id` / `lingua_lesson_id` first, else a
 * target_link_uri of the form `{launch_url}?course={id}` / `?lesson={id}`; none is the app's home.
 * A named course or lesson that does not exist refuses the launch (the log tells the administrator);
 * an unpublished course, or a lesson of one, is refused the same way, word for word: a launch is
 * never an author, so a draft does not exist for it (content/service.ts `visibleCourses`).
 */
export async function resolveTarget(
  env: Env,
  claims: Record<string, unknown>,
  consumer: ConsumerRow,
): Promise<Target | null> {
  const custom = asRecord(claims[CLAIMS.custom]) ?? {};
  const uri = new URL(claims[CLAIMS.targetLinkUri] as string);
  const text = (v: unknown) => (typeof v === "string" && v.trim() ? v.trim() : null);
  const lessonId =
    text(custom.lingua_lesson_id) ?? (text(custom.lingua_course_id) ? null : uri.searchParams.get("lesson"));
  const courseId = text(custom.lingua_course_id) ?? (lessonId ? null : uri.searchParams.get("course"));
  const db = database(env.DB);
  if (lessonId) {
    const lesson = await db
      .select({ id: lessons.id, title: lessons.title })
      .from(lessons)
      .innerJoin(courses, eq(courses.id, lessons.courseId))
      .where(and(eq(lessons.id, lessonId), visibleCourses(false)))
      .get();
    if (!lesson)
      throw new LaunchRefusal(
        "target_unknown",
        `No Lingua lesson ${lessonId}; check the link's custom parameters or URL.`,
        consumer,
      );
    return { type: "lesson", ...lesson };
  }
  if (courseId) {
    const course = await db
      .select({ id: courses.id, title: courses.title })
      .from(courses)
      .where(and(eq(courses.id, courseId), visibleCourses(false)))
      .get();
    if (!course)
      throw new LaunchRefusal(
        "target_unknown",
        `No Lingua course ${courseId}; check the link's custom parameters or URL.`,
        consumer,
      );
    return { type: "course", ...course };
  }
  return null;
}

/**
 * The AGS endpoint claim as kept: its scopes, and `lineitem` / `lineitems` only when scores may be
 * sent there (an http(s) URL the outbound gate admits). A launch without a usable line item is
 * accepted but not gradable.
 */
function agsOf(env: Env, claim: unknown): Record<string, unknown> | null {
  const ags = pick(claim, ["lineitem", "lineitems", "scope"]);
  if (!ags) return null;
  for (const field of ["lineitem", "lineitems"])
    if (ags[field] !== undefined && !usableLineItem(env, ags[field])) delete ags[field];
  return ags;
}

/** A link's description: long text, line breaks kept. */
const LINK_DESCRIPTION = { max: 5000, multiline: true } as const satisfies DisplayTextRule;

/**
 * The claim's fields the log keeps, the display ones (titles, label, description) cleaned as a name
 * is (control and bidirectional characters dropped, cut to the rule's length), not refused; one
 * that nothing is left of is left out.
 */
function cleaned(
  claim: unknown,
  fields: string[],
  display: Record<string, DisplayTextRule>,
): Record<string, unknown> | null {
  const picked = pick(claim, fields);
  if (!picked) return null;
  for (const [field, rule] of Object.entries(display)) {
    if (picked[field] === undefined) continue;
    const text = sanitizeDisplayText(picked[field], rule);
    if (text === null) delete picked[field];
    else picked[field] = text;
  }
  return picked;
}

/** The launch row of an accepted launch: every claim the log and grade passback need, as sent (line items as kept). */
export function succeededLaunch(
  env: Env,
  consumer: ConsumerRow,
  claims: Record<string, unknown>,
  userId: string,
  target: Target | null,
): LaunchRow {
  return {
    id: newId("lti"),
    institutionId: consumer.institutionId,
    consumerId: consumer.id,
    status: "succeeded",
    failureReason: null,
    failureDetail: null,
    deploymentId: claims[CLAIMS.deploymentId] as string,
    messageType: claims[CLAIMS.messageType] as string,
    sub: claims.sub as string,
    userId,
    roles: (claims[CLAIMS.roles] as unknown[]).filter((r): r is string => typeof r === "string"),
    context: cleaned(claims[CLAIMS.context], ["id", "label", "title", "type"], {
      label: TITLE,
      title: TITLE,
    }),
    resourceLink: cleaned(claims[CLAIMS.resourceLink], ["id", "title", "description"], {
      title: TITLE,
      description: LINK_DESCRIPTION,
    }),
    custom: asRecord(claims[CLAIMS.custom]),
    targetLinkUri: claims[CLAIMS.targetLinkUri] as string,
    targetType: target?.type ?? null,
    targetId: target?.id ?? null,
    targetTitle: target?.title ?? null,
    ags: agsOf(env, claims[CLAIMS.ags]),
    nrps: asRecord(claims[CLAIMS.nrps]),
    createdAt: nowIso(),
  };
}

/** A refused launch: this row is all it records. */
export async function recordRefusal(env: Env, refusal: LaunchRefusal): Promise<LaunchRow> {
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
    createdAt: nowIso(),
  };
  await database(env.DB).insert(ltiLaunches).values(row).run();
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

export async function listLaunches(
  env: Env,
  institutionId: string,
  filters: { consumer_id?: string; user_id?: string; status?: LaunchStatus },
  page: PageRequest,
) {
  const db = database(env.DB);
  const conditions: SQL[] = [eq(ltiLaunches.institutionId, institutionId)];
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

/** The institution's launch, or 404 (also for another institution's). */
export async function findLaunch(env: Env, institutionId: string, id: string): Promise<LaunchRow> {
  const row = await database(env.DB)
    .select()
    .from(ltiLaunches)
    .where(and(eq(ltiLaunches.id, id), eq(ltiLaunches.institutionId, institutionId)))
    .get();
  if (!row) throw new ApiError("not_found", `No LTI launch ${id}.`);
  return row;
}
