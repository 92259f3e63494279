import type { z } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import { courses, lessons } from "../../../db/schema";
import { ApiError } from "../../../platform/errors";
import type { PrincipalContext, ServiceContext } from "../../../platform/service/context";
import { visibleCourses } from "../../content/service";
import { asRecord, LINE_ITEM_READ_SCOPES } from "../claims";
import type { LaunchRow } from "../launch/launch-log";
import { nextLink } from "../outbound";
import type { ConsumerRow } from "../registrations/service";
import { agsScopes, lineItemsOf } from "./line-item";
import type { CreateLineItemBody, LineItemSchema } from "./line-item-schemas";
import { callPlatformService, launchForServices, platformJson, requireConsumer } from "./platform-call";

/**
 * The AGS line item service of a launch's context: the line items of its `lineitems` URL, listed and
 * created with the registration's token for the line-item scope, so a grade can go to a column the
 * tool created (`line_item_url` of a passback).
 */

export const LINE_ITEM_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem";
export const LINE_ITEM_TYPE = "application/vnd.ims.lis.v2.lineitem+json";
export const LINE_ITEM_CONTAINER_TYPE = "application/vnd.ims.lis.v2.lineitemcontainer+json";
/** At most this many pages of line items are followed. */
const MAX_PAGES = 20;

type LineItem = z.infer<typeof LineItemSchema>;

function unavailable(detail: string): ApiError {
  return new ApiError("lti_line_items_unavailable", detail);
}

/** The launch's `lineitems` URL and the scope to use it with (`write`: the full line-item scope). */
function lineItemsAccess(
  ctx: ServiceContext,
  launch: LaunchRow,
  write: boolean,
): { url: string; scope: string } {
  const url = lineItemsOf(ctx.env, launch);
  if (!url)
    throw unavailable(
      "This launch carries no usable AGS lineitems URL; launch from a course whose LMS grants the tool Assignment and Grade Services (line item management).",
    );
  const granted = agsScopes(launch);
  const scope = write
    ? granted.includes(LINE_ITEM_SCOPE)
      ? LINE_ITEM_SCOPE
      : null
    : (LINE_ITEM_READ_SCOPES.find((s) => granted.includes(s)) ?? null);
  if (!scope)
    throw unavailable(
      write
        ? `The platform did not grant this launch the scope ${LINE_ITEM_SCOPE}, which creating a line item needs.`
        : "The platform granted this launch no line-item scope (lineitem or lineitem.readonly).",
    );
  return { url, scope };
}

function present(value: unknown): LineItem | null {
  const item = asRecord(value);
  if (!item || typeof item.id !== "string" || !item.id) return null;
  const text = (v: unknown) => (typeof v === "string" ? v : null);
  return {
    id: item.id,
    label: text(item.label),
    score_maximum: typeof item.scoreMaximum === "number" ? item.scoreMaximum : null,
    resource_id: text(item.resourceId),
    tag: text(item.tag),
  };
}

async function launchAndConsumer(ctx: PrincipalContext, launchId: string) {
  const { launch, consumer } = await launchForServices(ctx, launchId);
  return { launch, consumer };
}

/** Every line item of the launch's context the platform lists (filtered by it), in its order. */
export async function listLineItems(
  ctx: PrincipalContext,
  input: { launchId: string; resource_id?: string; tag?: string },
): Promise<LineItem[]> {
  const { launch, consumer } = await launchAndConsumer(ctx, input.launchId);
  const { url, scope } = lineItemsAccess(ctx, launch, false);
  const registration: ConsumerRow = requireConsumer(consumer, "lti_line_items_unavailable");
  const first = new URL(url);
  if (input.resource_id) first.searchParams.set("resource_id", input.resource_id);
  if (input.tag) first.searchParams.set("tag", input.tag);
  const items: LineItem[] = [];
  let next: string | null = first.toString();
  for (let page = 0; next; page++) {
    if (page === MAX_PAGES)
      throw new ApiError("bad_gateway", `The platform's line items run to more than ${MAX_PAGES} pages.`);
    const outcome = await callPlatformService(
      ctx,
      registration,
      scope,
      next,
      { method: "GET", headers: { Accept: LINE_ITEM_CONTAINER_TYPE } },
      "the line items request",
    );
    const body = platformJson(outcome, "the line items request");
    if (!Array.isArray(body))
      throw new ApiError("bad_gateway", "The platform's line items answer is not a list.");
    for (const value of body) {
      const item = present(value);
      if (item) items.push(item);
    }
    const following = nextLink(outcome.link, next);
    if (following && new URL(following).origin !== first.origin)
      throw new ApiError(
        "bad_gateway",
        "The platform's next line items page is on another origin than its lineitems URL; not followed.",
      );
    next = following;
  }
  return items;
}

/** The course or lesson a line item is for: published (as a launch sees it), else 422. */
async function resourceOf(ctx: ServiceContext, body: z.infer<typeof CreateLineItemBody>): Promise<string> {
  const { db } = ctx;
  if (body.lesson_id !== undefined) {
    const lesson = await db
      .select({ id: lessons.id })
      .from(lessons)
      .innerJoin(courses, eq(courses.id, lessons.courseId))
      .where(and(eq(lessons.id, body.lesson_id), visibleCourses(false)))
      .get();
    if (!lesson)
      throw new ApiError("validation_failed", `No published lesson ${body.lesson_id}.`, {
        errors: [{ path: "lesson_id", message: "must be a published lesson" }],
      });
    return lesson.id;
  }
  const course = await db
    .select({ id: courses.id })
    .from(courses)
    .where(and(eq(courses.id, body.course_id as string), visibleCourses(false)))
    .get();
  if (!course)
    throw new ApiError("validation_failed", `No published course ${body.course_id}.`, {
      errors: [{ path: "course_id", message: "must be a published course" }],
    });
  return course.id;
}

/** Creates a line item in the launch's context, tagged `resourceId` with the course or lesson id. */
export async function createLineItem(
  ctx: PrincipalContext,
  input: { launchId: string; body: z.infer<typeof CreateLineItemBody> },
): Promise<LineItem> {
  const { launch, consumer } = await launchAndConsumer(ctx, input.launchId);
  const { url } = lineItemsAccess(ctx, launch, true);
  const registration = requireConsumer(consumer, "lti_line_items_unavailable");
  const resourceId = await resourceOf(ctx, input.body);
  const outcome = await callPlatformService(
    ctx,
    registration,
    LINE_ITEM_SCOPE,
    url,
    {
      method: "POST",
      headers: { "Content-Type": LINE_ITEM_TYPE, Accept: LINE_ITEM_TYPE },
      body: JSON.stringify({
        label: input.body.label,
        scoreMaximum: input.body.score_maximum,
        resourceId,
        ...(input.body.tag !== undefined ? { tag: input.body.tag } : {}),
      }),
    },
    "the new line item",
  );
  const item = present(platformJson(outcome, "the new line item"));
  if (!item) throw new ApiError("bad_gateway", "The platform's answer to the new line item has no id.");
  return item;
}
