import { ApiError } from "../../../platform/errors";
import type { ServiceContext } from "../../../platform/service/context";
import { asRecord } from "../claims";
import { usableLineItem } from "../grades/line-item";
import { callPlatformService, platformJson } from "../grades/platform-call";
import type { LaunchRow } from "../launch/launch-log";
import { nextLink } from "../outbound";
import type { ConsumerRow } from "../registrations/service";

/**
 * Names and Role Provisioning Services 2.0: the membership of a launch's context, read from the
 * platform's `context_memberships_url` (the launch's NRPS claim) page by page.
 */

export const NRPS_SCOPE = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly";
export const MEMBERSHIP_MEDIA_TYPE = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json";
/** At most this many pages are followed; a roster longer than that is refused rather than cut short. */
export const MAX_ROSTER_PAGES = 50;
/** At most this many members are read. */
export const MAX_ROSTER_MEMBERS = 20_000;

export interface RosterMember {
  user_id: string;
  name: string | null;
  given_name: string | null;
  family_name: string | null;
  email: string | null;
  roles: string[];
  /** NRPS `status`: `Active` when the platform sent none. */
  status: "Active" | "Inactive" | "Deleted";
}

const text = (value: unknown, max: number): string | null =>
  typeof value === "string" && value.length > 0 ? value.slice(0, max) : null;

function member(value: unknown): RosterMember | null {
  const record = asRecord(value);
  const userId = text(record?.user_id, 255);
  if (!record || !userId) return null;
  const status = record.status === "Inactive" || record.status === "Deleted" ? record.status : "Active";
  return {
    user_id: userId,
    name: text(record.name, 1000),
    given_name: text(record.given_name, 1000),
    family_name: text(record.family_name, 1000),
    email: text(record.email, 320),
    roles: Array.isArray(record.roles)
      ? record.roles.filter((r): r is string => typeof r === "string").slice(0, 50)
      : [],
    status,
  };
}

/** The launch's `context_memberships_url`, when its NRPS claim carries a usable one. */
export function membershipsUrlOf(ctx: ServiceContext, launch: LaunchRow): string | null {
  return launch.status === "succeeded"
    ? usableLineItem(ctx.env, asRecord(launch.nrps)?.context_memberships_url)
    : null;
}

/** The launch's memberships URL, or 409 `lti_roster_unavailable`. */
export function requireMembershipsUrl(ctx: ServiceContext, launch: LaunchRow): string {
  const url = membershipsUrlOf(ctx, launch);
  if (!url)
    throw new ApiError(
      "lti_roster_unavailable",
      "This launch carries no Names and Role Provisioning claim with a usable context_memberships_url; enable the service for the tool in the LMS (Canvas: the NRPS scope of the developer key; Moodle: 'IMS LTI Names and Role Provisioning') and launch again.",
    );
  return url;
}

/**
 * Every member of the launch's context, in the platform's order: the memberships URL with `role`
 * and `limit` when given, then each `Link: <…>; rel="next"` page, which must stay on the memberships
 * URL's origin (the bearer token goes with it). More than MAX_ROSTER_PAGES pages or
 * MAX_ROSTER_MEMBERS members: `bad_gateway`, never a roster cut short.
 */
export async function readRoster(
  ctx: ServiceContext,
  consumer: ConsumerRow,
  launch: LaunchRow,
  query: { role?: string; limit?: number },
): Promise<RosterMember[]> {
  const first = new URL(requireMembershipsUrl(ctx, launch));
  if (query.role) first.searchParams.set("role", query.role);
  if (query.limit) first.searchParams.set("limit", String(query.limit));
  const members: RosterMember[] = [];
  let url: string | null = first.toString();
  for (let page = 0; url; page++) {
    if (page === MAX_ROSTER_PAGES)
      throw new ApiError(
        "bad_gateway",
        `The platform's roster runs to more than ${MAX_ROSTER_PAGES} pages; ask for larger pages with limit.`,
      );
    const outcome = await callPlatformService(
      ctx,
      consumer,
      NRPS_SCOPE,
      url,
      { method: "GET", headers: { Accept: MEMBERSHIP_MEDIA_TYPE } },
      "the roster request",
    );
    const body = asRecord(platformJson(outcome, "the roster request"));
    if (!body || !Array.isArray(body.members))
      throw new ApiError("bad_gateway", "The platform's roster answer has no members array.");
    for (const raw of body.members) {
      const parsed = member(raw);
      if (parsed) members.push(parsed);
    }
    if (members.length > MAX_ROSTER_MEMBERS)
      throw new ApiError("bad_gateway", `The platform's roster has more than ${MAX_ROSTER_MEMBERS} members.`);
    const next = nextLink(outcome.link, url);
    if (next && new URL(next).origin !== first.origin)
      throw new ApiError(
        "bad_gateway",
        "The platform's next roster page is on another origin than its memberships URL; not followed.",
      );
    url = next;
  }
  return members;
}
