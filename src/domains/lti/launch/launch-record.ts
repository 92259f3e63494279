import { and, eq } from "drizzle-orm";
import { courses, lessons } from "../../../db/schema";
import type { Env } from "../../../env";
import { newId, nowIso } from "../../../platform/ids";
import type { ServiceContext } from "../../../platform/service/context";
import { type DisplayTextRule, sanitizeDisplayText, TITLE } from "../../../platform/text";
import { visibleCourses } from "../../content/service";
import { asRecord, CLAIMS, DEEP_LINKING_REQUEST, pick } from "../claims";
import { usableLineItem } from "../grades/line-item";
import type { ConsumerRow } from "../registrations/service";
import type { LaunchRow } from "./launch-log";
import { LaunchRefusal } from "./refusal";

/** An accepted launch: what it opens, and the row the launch log keeps of it. */

export interface Target {
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
  ctx: ServiceContext,
  input: { claims: Record<string, unknown>; consumer: ConsumerRow },
): Promise<Target | null> {
  const { claims, consumer } = input;
  // A deep-linking request opens the selection of content, never a course or lesson.
  if (claims[CLAIMS.messageType] === DEEP_LINKING_REQUEST) return null;
  const custom = asRecord(claims[CLAIMS.custom]) ?? {};
  const uri = new URL(claims[CLAIMS.targetLinkUri] as string);
  const text = (v: unknown) => (typeof v === "string" && v.trim() ? v.trim() : null);
  const lessonId =
    text(custom.lingua_lesson_id) ?? (text(custom.lingua_course_id) ? null : uri.searchParams.get("lesson"));
  const courseId = text(custom.lingua_course_id) ?? (lessonId ? null : uri.searchParams.get("course"));
  const { db } = ctx;
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

/** The `deep_linking_settings` fields kept: what the response must honour, and `data` to echo unchanged. */
const DEEP_LINKING_FIELDS = [
  "deep_link_return_url",
  "accept_types",
  "accept_presentation_document_targets",
  "accept_media_types",
  "accept_multiple",
  "accept_lineitem",
  "auto_create",
  "title",
  "text",
  "data",
];

/** The launch row of an accepted launch: every claim the log and grade passback need, as sent (line items as kept). */
export function succeededLaunch(
  ctx: ServiceContext,
  input: {
    consumer: ConsumerRow;
    claims: Record<string, unknown>;
    userId: string;
    target: Target | null;
  },
): LaunchRow {
  const { consumer, claims, userId, target } = input;
  const deepLinking = claims[CLAIMS.messageType] === DEEP_LINKING_REQUEST;
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
    targetLinkUri: (claims[CLAIMS.targetLinkUri] as string | undefined) ?? null,
    targetType: target?.type ?? null,
    targetId: target?.id ?? null,
    targetTitle: target?.title ?? null,
    ags: agsOf(ctx.env, claims[CLAIMS.ags]),
    nrps: asRecord(claims[CLAIMS.nrps]),
    kind: deepLinking ? "deep_linking" : "resource_link",
    deepLinking: deepLinking
      ? cleaned(claims[CLAIMS.deepLinkingSettings], DEEP_LINKING_FIELDS, {
          title: TITLE,
          text: LINK_DESCRIPTION,
        })
      : null,
    deepLinkingRespondedAt: null,
    createdAt: nowIso(ctx.now()),
  };
}
