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

// ——— Line items of the launch's context (AGS line item service) ———

/** The launch's `lineitems` URL (its context's line items), or null when it has none usable. */
export function lineItemsOf(env: Env, launch: LaunchRow): string | null {
  return launch.status === "succeeded" ? usableLineItem(env, launch.ags?.lineitems) : null;
}

/**
 * Whether `url` is a line item of the launch's context: its own `lineitem`, or a URL below its
 * `lineitems` URL — the same origin, and a path that continues the `lineitems` path by a `/` — that the
 * gate's text rules admit. The path is compared after the URL parser resolved `.` and `..` segments
 * (also as `%2e`), and a remainder holding an encoded slash, backslash or dot segment is refused, so a
 * URL that only looks like it is below (and a server would read as elsewhere) is not. Query strings
 * may differ (Moodle's line items carry `?type_id=`). Anything else could point the platform's token
 * at another context of the same platform, or at another server altogether: refused.
 */
export function lineItemOfContext(env: Env, launch: LaunchRow, url: string): boolean {
  if (usableLineItem(env, url) === null) return false;
  if (url === lineItemOf(env, launch)) return true;
  const container = lineItemsOf(env, launch);
  if (!container) return false;
  let candidate: URL;
  let base: URL;
  try {
    candidate = new URL(url);
    base = new URL(container);
  } catch {
    return false;
  }
  if (candidate.origin !== base.origin || candidate.username || candidate.password || candidate.hash)
    return false;
  const prefix = `${base.pathname.replace(/\/+$/, "")}/`;
  if (!candidate.pathname.startsWith(prefix)) return false;
  const rest = candidate.pathname.slice(prefix.length);
  if (!rest || /%(2f|5c|2e)/i.test(rest) || rest.includes("\\") || rest.split("/").some((s) => s === ""))
    return false;
  return true;
}
