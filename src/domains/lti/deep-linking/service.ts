import { and, asc, eq, inArray, isNull } from "drizzle-orm";
import { courses, lessons, ltiLaunches } from "../../../db/schema";
import { enforce } from "../../../platform/auth/policy";
import { ApiError, type FieldError, validationError } from "../../../platform/errors";
import type { PageRequest } from "../../../platform/http/pagination";
import { nowIso } from "../../../platform/ids";
import type { PrincipalContext, ServiceContext } from "../../../platform/service/context";
import { type CourseFilters, listCourses, visibleCourses } from "../../content/service";
import { RESOURCE_LINK_ITEM } from "../claims";
import type { LaunchRow } from "../launch/launch-log";
import { mayDeepLink } from "../policy";
import { type ConsumerRow, consumerById } from "../registrations/service";
import { type ChosenItem, contentItem, signResponse } from "./response-token";

/**
 * Deep Linking 2.0: an instructor's deep-linking launch lists what may be linked (published courses
 * and their lessons) and builds its one `LtiDeepLinkingResponse`, both with the launch's own session.
 */

/** The deep-linking launch the caller's session belongs to (mayDeepLink), or the problem saying why not. */
export async function deepLinkingLaunch(ctx: PrincipalContext, id: string): Promise<LaunchRow> {
  const launch = await ctx.db.select().from(ltiLaunches).where(eq(ltiLaunches.id, id)).get();
  enforce(mayDeepLink(ctx.principal, launch, id));
  return launch as LaunchRow;
}

/** A course that may be linked, with its lessons in order. */
export interface LinkableCourse {
  course: typeof courses.$inferSelect;
  lessons: (typeof lessons.$inferSelect)[];
}

/**
 * A page of the published courses (the filters and order of `GET /api/courses`), each with its
 * lessons: two queries whatever the page size.
 */
export async function listItems(
  ctx: PrincipalContext,
  input: { launchId: string; filters: Omit<CourseFilters, "published">; page: PageRequest },
): Promise<{ total: number; rows: LinkableCourse[] }> {
  await deepLinkingLaunch(ctx, input.launchId);
  const { total, rows } = await listCourses(ctx, {
    filters: input.filters,
    page: input.page,
    includeDrafts: false,
  });
  const ids = rows.map((row) => row.id);
  const outline =
    ids.length === 0
      ? []
      : await ctx.db
          .select()
          .from(lessons)
          .where(inArray(lessons.courseId, ids))
          .orderBy(asc(lessons.courseId), asc(lessons.position));
  return {
    total,
    rows: rows.map((course) => ({ course, lessons: outline.filter((l) => l.courseId === course.id) })),
  };
}

/** An item of the response as asked for (the JSON body's shape; a form is read into it). */
export interface RequestedItem {
  course_id?: string;
  lesson_id?: string;
  title?: string;
  line_item?: { score_maximum: number; label?: string; tag?: string };
}

/** What the platform's request accepts (its settings as kept; the specification's defaults when absent). */
function acceptance(launch: LaunchRow) {
  const settings = launch.deepLinking ?? {};
  const types = Array.isArray(settings.accept_types) ? settings.accept_types : [];
  return {
    resourceLinks: types.includes(RESOURCE_LINK_ITEM),
    multiple: settings.accept_multiple !== false,
    lineItems: settings.accept_lineitem !== false,
  };
}

/** The items the platform's request forbids, each named by its path; the response is not used up. */
function checkAccepted(launch: LaunchRow, items: RequestedItem[]): void {
  const accepts = acceptance(launch);
  const errors: FieldError[] = [];
  if (items.length > 0 && !accepts.resourceLinks)
    errors.push({
      path: "items",
      message:
        "the platform's accept_types do not include ltiResourceLink: it accepts no link from this tool",
    });
  if (items.length > 1 && !accepts.multiple)
    errors.push({ path: "items", message: "the platform accepts one item only (accept_multiple is false)" });
  if (!accepts.lineItems)
    items.forEach((item, i) => {
      if (item.line_item)
        errors.push({
          path: `items.${i}.line_item`,
          message: "the platform accepts no line items (accept_lineitem is false)",
        });
    });
  if (errors.length > 0)
    throw new ApiError("lti_deep_linking_not_accepted", errors.map((e) => e.message).join("; "), { errors });
}

/** Each requested course or lesson, published (a draft, like an unknown id, is a 422 naming the item). */
async function chosenItems(ctx: ServiceContext, items: RequestedItem[]): Promise<ChosenItem[]> {
  const courseIds = items.flatMap((item) => (item.course_id ? [item.course_id] : []));
  const lessonIds = items.flatMap((item) => (item.lesson_id ? [item.lesson_id] : []));
  const { db } = ctx;
  const [foundCourses, foundLessons] = await Promise.all([
    courseIds.length === 0
      ? []
      : db
          .select({ id: courses.id, title: courses.title })
          .from(courses)
          .where(and(inArray(courses.id, courseIds), visibleCourses(false))),
    lessonIds.length === 0
      ? []
      : db
          .select({ id: lessons.id, title: lessons.title })
          .from(lessons)
          .innerJoin(courses, eq(courses.id, lessons.courseId))
          .where(and(inArray(lessons.id, lessonIds), visibleCourses(false))),
  ]);
  const errors: FieldError[] = [];
  const chosen = items.map((item, i): ChosenItem | null => {
    const type = item.course_id ? "course" : "lesson";
    const id = (item.course_id ?? item.lesson_id) as string;
    const found = (type === "course" ? foundCourses : foundLessons).find((row) => row.id === id);
    if (!found) {
      errors.push({ path: `items.${i}.${type}_id`, message: `no published ${type} ${id}` });
      return null;
    }
    const title = item.title ?? found.title;
    return {
      type,
      id,
      title,
      ...(item.line_item
        ? {
            lineItem: {
              scoreMaximum: item.line_item.score_maximum,
              label: item.line_item.label ?? title,
              tag: item.line_item.tag,
            },
          }
        : {}),
    };
  });
  if (errors.length > 0) throw validationError(errors);
  return chosen as ChosenItem[];
}

function alreadyResponded(id: string): ApiError {
  return new ApiError(
    "lti_deep_linking_responded",
    `The response of deep-linking launch ${id} was built already; each deep-linking request takes one.`,
  );
}

/**
 * The launch's one `LtiDeepLinkingResponse`: checked against what the platform accepts and what is
 * published (a refusal leaves the response unused), signed, and only then claimed by a conditional
 * update (while `deep_linking_responded_at` is null), so that of two racing requests one answers the
 * JWT and the other 409. A request that fails after the claim leaves the response used: the
 * instructor starts deep linking again from the platform.
 */
export async function respond(
  ctx: PrincipalContext,
  input: { launchId: string; items: RequestedItem[]; origin: string },
): Promise<{ return_url: string; jwt: string; launch: LaunchRow; consumer: ConsumerRow }> {
  const { launchId, items, origin } = input;
  const launch = await deepLinkingLaunch(ctx, launchId);
  if (launch.deepLinkingRespondedAt !== null) throw alreadyResponded(launchId);
  checkAccepted(launch, items);
  const chosen = await chosenItems(ctx, items);
  const consumer = launch.consumerId ? await consumerById(ctx, launch.consumerId) : undefined;
  if (!consumer)
    throw new ApiError(
      "not_found",
      `The registration of deep-linking launch ${launchId} was deleted; nothing can be linked through it.`,
    );
  const jwt = await signResponse(ctx, {
    consumer,
    launch,
    items: chosen.map((item) => contentItem(origin, consumer.id, item)),
  });
  const [claimed] = await ctx.db
    .update(ltiLaunches)
    .set({ deepLinkingRespondedAt: nowIso(ctx.now()) })
    .where(and(eq(ltiLaunches.id, launchId), isNull(ltiLaunches.deepLinkingRespondedAt)))
    .returning({ id: ltiLaunches.id });
  if (!claimed) throw alreadyResponded(launchId);
  return { return_url: String(launch.deepLinking?.deep_link_return_url), jwt, launch, consumer };
}

/**
 * The deep-linking launch a selection page is for, by its id alone (the page is public; what it shows
 * comes later through the session): a succeeded, unanswered deep-linking launch and the origins that
 * may frame the page (its return URL's and issuer's) and what it accepts, else null.
 */
export async function selectionTarget(
  ctx: ServiceContext,
  id: string,
): Promise<{
  returnUrl: string;
  frameOrigins: string[];
  acceptMultiple: boolean;
  acceptLineItem: boolean;
} | null> {
  const launch = await ctx.db.select().from(ltiLaunches).where(eq(ltiLaunches.id, id)).get();
  if (launch?.status !== "succeeded" || launch.kind !== "deep_linking") return null;
  if (launch.deepLinkingRespondedAt !== null) return null;
  const returnUrl = String(launch.deepLinking?.deep_link_return_url ?? "");
  const consumer = launch.consumerId ? await consumerById(ctx, launch.consumerId) : undefined;
  const accepts = acceptance(launch);
  return {
    returnUrl,
    frameOrigins: platformOrigins(returnUrl, consumer?.issuer),
    acceptMultiple: accepts.multiple,
    acceptLineItem: accepts.lineItems,
  };
}

/**
 * The origins of the platform, for `frame-ancestors` and `form-action`: the return URL's (the LMS's
 * own host: Canvas's issuer is canvas.instructure.com while a school's Canvas is on its own host) and
 * the issuer's when it is a URL.
 */
export function platformOrigins(returnUrl: string, issuer: string | undefined): string[] {
  const origins = new Set<string>();
  for (const value of [returnUrl, issuer]) {
    try {
      if (value) origins.add(new URL(value).origin);
    } catch {}
  }
  return [...origins].filter((origin) => /^https?:\/\//.test(origin));
}
