import type { ltiConsumers } from "../../../db/schema";
import type { ServiceContext } from "../../../platform/service/context";
import { FIRST_DATABASE } from "../../../platform/service/databases";
import {
  claimAll,
  type DirectoryClaim,
  directoryClaim,
  releaseKey,
} from "../../../platform/service/directory";

type ConsumerRow = typeof ltiConsumers.$inferSelect;

/**
 * How LTI's public entry points find a registration of an institution outside `DB`
 * (design/multi-database.md#entry-points): by its id (`lti_registration`: its own login URL,
 * callback, key set, and the state of every login, which names it) and by its issuer and client id
 * (`lti_client`: the shared login URL). Both are claimed in `DB` when the registration is written
 * elsewhere, and released when it is deleted.
 */

/** The `lti_client` key of a platform's (issuer, client id). */
export function clientKey(issuer: string, clientId: string): string {
  return `${issuer} ${clientId}`;
}

/** The claim of a registration's id, for the commit that writes it. */
export function registrationClaim(row: Pick<ConsumerRow, "id" | "institutionId">): DirectoryClaim {
  return directoryClaim("lti_registration", row.id, row.institutionId, "lti_consumers.id");
}

/**
 * Claims the registration's (issuer, client id) for the shared login URL when no other institution
 * holds it. Several institutions may register one platform's pair (in one database, a login tells
 * them apart by deployment id); across databases the first holds the key, and the others' logins go
 * through their registration's own login URL (`tool.login_url`), which always works.
 */
export async function claimClientKey(
  ctx: ServiceContext,
  row: Pick<ConsumerRow, "issuer" | "clientId" | "institutionId">,
): Promise<void> {
  if (ctx.database === FIRST_DATABASE) return;
  const key = clientKey(row.issuer, row.clientId);
  await claimAll(ctx, [
    directoryClaim("lti_client", key, row.institutionId, "lti_consumers.client_id"),
  ]).catch(() => undefined);
}

/** Releases a registration's keys once it is deleted (or its pair's once its issuer or client id changed). */
export async function releaseRegistrationKeys(
  ctx: ServiceContext,
  row: Pick<ConsumerRow, "id" | "issuer" | "clientId" | "institutionId">,
  which: { id: boolean } = { id: true },
): Promise<void> {
  if (which.id) await releaseKey(ctx, "lti_registration", row.id, row.institutionId);
  await releaseKey(ctx, "lti_client", clientKey(row.issuer, row.clientId), row.institutionId);
}
