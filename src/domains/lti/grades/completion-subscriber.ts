import { jsonArrays } from "../../../platform/batch";
import { newId, nowIso } from "../../../platform/ids";
import type { ServiceContext } from "../../../platform/service/context";
import { SCORE_SCOPE } from "../claims";
import { usableLineItem } from "./line-item";
import { enqueuePassbacks } from "./passback-target";
import {
  COMPLETION_LAUNCHES_SQL,
  type CompletionLaunchRow,
  INSERT_COMPLETION_PASSBACKS_SQL,
  UNSENT_PASSBACKS_SQL,
  type UnsentPassbackRow,
} from "./sql";

/**
 * LTI's subscription to the outbox: a learner's `lesson.completed` / `course.completed` becomes a
 * score for the launches that opened that lesson or course (the newest launch per line item, so one
 * assignment gets one score), sent through the passback queue. The unique (launch, event) index makes
 * a repeated delivery of the event a no-op.
 */
export const LTI_EVENT_TYPES = ["lesson.completed", "course.completed"] as const;

type Match = CompletionLaunchRow;

/** The score of a completion, as a fraction of 1: the lesson's score, or 1 for a course. */
function fractionOf(match: Match): number {
  if (match.type === "course.completed") return 1;
  const score = (JSON.parse(match.payload) as { score?: unknown }).score;
  return typeof score === "number" && Number.isFinite(score) ? Math.min(1, Math.max(0, score)) : 1;
}

/** The outbox subscriber `(ctx, eventIds)`: the completions' scores, inserted and queued. */
export async function passbackCompletions(ctx: ServiceContext, eventIds: readonly string[]): Promise<void> {
  if (eventIds.length === 0) return;
  const d1 = ctx.d1;
  const list = JSON.stringify(eventIds);
  const matches = (await d1.prepare(COMPLETION_LAUNCHES_SQL).bind(list).all<Match>()).results.filter((m) => {
    const ags = (JSON.parse(m.ags) as { scope?: unknown; lineitem?: unknown }) ?? {};
    return (
      usableLineItem(ctx.env, ags.lineitem) !== null &&
      Array.isArray(ags.scope) &&
      ags.scope.includes(SCORE_SCOPE)
    );
  });
  if (matches.length === 0) return;
  const now = new Date(ctx.now());
  const rows = matches.map((m) => [
    newId("lpb"),
    m.launch_id,
    m.institution_id,
    m.event_id,
    fractionOf(m),
    now.toISOString(),
  ]);
  const matchedEvents = JSON.stringify([...new Set(matches.map((m) => m.event_id))]);
  const insert = d1.prepare(INSERT_COMPLETION_PASSBACKS_SQL);
  const results = await d1.batch<UnsentPassbackRow>([
    ...jsonArrays(rows).map((part) => insert.bind(part, nowIso(now.getTime()))),
    d1.prepare(UNSENT_PASSBACKS_SQL).bind(matchedEvents),
  ]);
  const ids = (results.at(-1)?.results ?? []).map((r) => r.id);
  if (ids.length > 0) await enqueuePassbacks(ctx, ids);
}
