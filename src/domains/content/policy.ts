import { eq, type SQL } from "drizzle-orm";
import { courses } from "../../db/schema";
import type { Principal } from "../../platform/auth/principal";

/**
 * Who sees which content. Editing needs `content:write`, declared on its route (an ability only the
 * platform_admin role can hold), and nothing more; reading needs `content:read`, and what it shows
 * depends on `seesDrafts`. This file is also the content domain's face for the other domains that
 * take a course id from a caller (progress, exports, LTI): they scope with `visibleCourses`.
 */

/**
 * Who sees unpublished courses (and their lessons, blocks and items): platform staff, i.e. a token
 * holding `content:write`. For everybody else a draft does not exist: it is missing from every list
 * and its id answers 404.
 */
export function seesDrafts(principal: Principal): boolean {
  return principal.token.abilities.includes("content:write");
}

/**
 * The courses a caller sees, as a condition on `courses`: all of them for platform staff
 * (`seesDrafts`), the published ones for everybody else. Any other domain that takes a course id
 * from a caller checks it with this, so that a draft answers exactly as an unknown id does.
 */
export function visibleCourses(includeDrafts: boolean): SQL | undefined {
  return includeDrafts ? undefined : eq(courses.published, true);
}
