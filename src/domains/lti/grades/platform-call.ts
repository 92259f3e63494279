import { eq } from "drizzle-orm";
import { ltiConsumers, ltiLaunches } from "../../../db/schema";
import { enforce } from "../../../platform/auth/policy";
import { ApiError } from "../../../platform/errors";
import type { PrincipalContext, ServiceContext } from "../../../platform/service/context";
import type { LaunchRow } from "../launch/launch-log";
import { type AttemptOutcome, requestPlatformService, type ServiceOutcome } from "../outbound";
import { mayUseLaunchServices } from "../policy";
import type { ConsumerRow } from "../registrations/service";
import { accessToken, forgetAccessToken } from "./access-token";

/**
 * A request an API call makes to a platform service at once (an NRPS roster page, the line items of a
 * context): an access token for `scope` from the token cache, then the request through the outbound
 * gate. A 401 forgets the token and tries once more with a new one (the platform revoked it early).
 * What went wrong becomes the caller's problem: a platform that refused (4xx) is
 * `lti_platform_rejected` (502, with its status and the first KiB of its answer), one that failed
 * (5xx, time-out, unreachable) is `bad_gateway`.
 */
export async function callPlatformService(
  ctx: ServiceContext,
  consumer: ConsumerRow,
  scope: string,
  url: string,
  init: { method: "GET" | "POST"; headers: Record<string, string>; body?: string },
  what: string,
): Promise<ServiceOutcome> {
  for (let round = 0; round < 2; round++) {
    const token = await accessToken(ctx, consumer, scope);
    if (!("token" in token)) throw platformProblem(token.failure, `the access token for ${what}`);
    const outcome = await requestPlatformService(ctx, url, {
      ...init,
      headers: { ...init.headers, Authorization: `Bearer ${token.token}` },
    });
    if (outcome.responseStatus === 401 && round === 0) {
      await forgetAccessToken(ctx, consumer, scope, token);
      continue;
    }
    if (!outcome.ok) throw platformProblem(outcome, what);
    return outcome;
  }
  throw new Error("unreachable");
}

/** The problem of a platform's failed answer: refused (4xx but 408/429) or failed. */
export function platformProblem(outcome: AttemptOutcome, what: string): ApiError {
  const status = outcome.responseStatus;
  const refused = status !== null && status >= 400 && status < 500 && status !== 408 && status !== 429;
  if (refused)
    return new ApiError("lti_platform_rejected", `The platform refused ${what}: HTTP ${status}.`, {
      extensions: {
        platform_status: status,
        platform_body: outcome.responseBody?.slice(0, 1024) ?? null,
      },
    });
  return new ApiError(
    "bad_gateway",
    `The platform did not answer ${what} usably: ${outcome.error ?? `HTTP ${status}`}. Try again later.`,
  );
}

/** The JSON of a platform's answer, or `bad_gateway` naming what was asked. */
export function platformJson(outcome: ServiceOutcome, what: string): unknown {
  try {
    return JSON.parse(outcome.responseBody ?? "");
  } catch {
    throw new ApiError("bad_gateway", `The platform's answer to ${what} is not JSON (or too large to read).`);
  }
}

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
