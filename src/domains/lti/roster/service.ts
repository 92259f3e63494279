import { eq } from "drizzle-orm";
import { ltiConsumers, ltiLaunches } from "../../../db/schema";
import { enforce } from "../../../platform/auth/policy";
import { ApiError } from "../../../platform/errors";
import type { PrincipalContext } from "../../../platform/service/context";
import type { LaunchRow } from "../launch/launch-log";
import { mayUseLaunchServices } from "../policy";
import type { ConsumerRow } from "../registrations/service";
import { type RosterMember, readRoster, requireMembershipsUrl } from "./nrps";
import { linkedUsers } from "./provision";

/** The caller's institution's launch and its registration, for a launch service (roster, line items). */
export async function launchForServices(
  ctx: PrincipalContext,
  launchId: string,
): Promise<{ launch: LaunchRow; consumer: ConsumerRow | undefined }> {
  const launch = await ctx.db.select().from(ltiLaunches).where(eq(ltiLaunches.id, launchId)).get();
  enforce(mayUseLaunchServices(ctx.principal, launch, launchId));
  const consumer = launch?.consumerId
    ? await ctx.db.select().from(ltiConsumers).where(eq(ltiConsumers.id, launch.consumerId)).get()
    : undefined;
  return { launch: launch as LaunchRow, consumer };
}

/** The registration a launch's service calls go through, or the service's 409 when it was deleted. */
export function requireConsumer(
  consumer: ConsumerRow | undefined,
  code: "lti_roster_unavailable" | "lti_line_items_unavailable",
): ConsumerRow {
  if (!consumer) throw new ApiError(code, "The platform registration of this launch was deleted.");
  return consumer;
}

export interface RosterEntry extends RosterMember {
  lingua_user_id: string | null;
}

/** Sorted by `user_id` (the LTI `sub`), so pages of the list are stable whatever the platform's order. */
export async function launchRoster(
  ctx: PrincipalContext,
  input: { launchId: string; role?: string; limit?: number },
): Promise<RosterEntry[]> {
  const { launch, consumer } = await launchForServices(ctx, input.launchId);
  requireMembershipsUrl(ctx, launch);
  const registration = requireConsumer(consumer, "lti_roster_unavailable");
  const roster = await readRoster(ctx, registration, launch, input);
  const linked = await linkedUsers(
    ctx,
    registration.id,
    roster.map((m) => m.user_id),
  );
  return roster
    .map((m) => ({ ...m, lingua_user_id: linked.get(m.user_id) ?? null }))
    .sort((a, b) => (a.user_id < b.user_id ? -1 : a.user_id > b.user_id ? 1 : 0));
}
