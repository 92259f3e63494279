import type { ltiLaunches } from "../../../db/schema";
import type { Env } from "../../../env";
import { outboundPolicy, urlProblem } from "../../../platform/outbound";
import { SCORE_SCOPE } from "../claims";

/** What the grade rules read of a launch (its row, typed from the table: launches.ts imports this file). */
type LaunchRow = Pick<typeof ltiLaunches.$inferSelect, "ags" | "status">;

/**
 * The grade rules of a launch's AGS claim: which line item scores may go to, and whether a launch is
 * gradable at all. Pure: the launch's row (or a claim's value) and the deployment's outbound policy.
 */

/**
 * A line item URL scores may go to: an absolute http(s) URL that the outbound gate's text rules admit
 * (the same as a registration's URLs; the gate checks it again before each request). Else null.
 */
export function usableLineItem(env: Env, value: unknown): string | null {
  return typeof value === "string" && urlProblem(value, outboundPolicy(env)) === null ? value : null;
}

/** The launch's line item URL, or null when it has none scores may go to (the launch is not gradable). */
export function lineItemOf(env: Env, launch: LaunchRow): string | null {
  return usableLineItem(env, launch.ags?.lineitem);
}

/** The AGS scopes the launch's claim grants. */
export function agsScopes(launch: LaunchRow): string[] {
  const scope = launch.ags?.scope;
  return Array.isArray(scope) ? scope.filter((s): s is string => typeof s === "string") : [];
}

/** Whether grades can go back for a launch: it carries a usable AGS line item URL and the score scope. */
export function isGradable(env: Env, launch: LaunchRow): boolean {
  return (
    launch.status === "succeeded" &&
    lineItemOf(env, launch) !== null &&
    agsScopes(launch).includes(SCORE_SCOPE)
  );
}

/** The line item's scores endpoint: `/scores` appended to its path, before any query string. */
export function scoresUrl(lineItem: string): string {
  const url = new URL(lineItem);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/scores`;
  return url.toString();
}
