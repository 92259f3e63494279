import type { PrincipalContext } from "../../../platform/service/context";
import { launchForServices, requireConsumer } from "../grades/platform-call";
import { type RosterMember, readRoster, requireMembershipsUrl } from "./nrps";
import { linkedUsers } from "./provision";

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
