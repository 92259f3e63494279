import { ltiConsumers } from "../../../../db/schema";
import { isBatchGuardFailure } from "../../../../platform/batch";
import { ApiError } from "../../../../platform/errors";
import { newId } from "../../../../platform/ids";
import { commit } from "../../../../platform/service/commit";
import type { ServiceContext } from "../../../../platform/service/context";
import { sanitizeDisplayText } from "../../../../platform/text";
import { claimClientKey, registrationClaim } from "../directory-keys";
import { type ConsumerRow, duplicate, isUniqueViolation, newConsumerRow } from "../service";
import { ensureCurrentKey } from "../signing-keys";
import { claimLink, releaseLink, spendLink } from "./links";
import {
  fetchPlatformConfiguration,
  PLATFORM_CONFIGURATION_CLAIM,
  type PlatformConfiguration,
} from "./platform-configuration";
import { postRegistration, registrationDocument } from "./tool-registration";

/**
 * `GET /api/lti/register` end to end: the link taken, the platform's configuration read and checked,
 * the registration's URLs checked by the outbound gate, the tool's registration posted, and the
 * registration stored with the platform's client id and deployment in the batch that spends the
 * link. Any failure stores nothing and gives the link back (it stays usable until it expires).
 */

const PRODUCTS: Record<string, string> = {
  canvas: "Canvas",
  moodle: "Moodle",
  blackboard: "Blackboard",
  desire2learn: "D2L Brightspace",
  d2l: "D2L Brightspace",
  schoology: "Schoology",
  sakai: "Sakai",
};

/** The name a dynamic registration gets: the product and the issuer's host ("Moodle (moodle.school.edu)"). */
export function registrationName(platform: PlatformConfiguration): string {
  const code = platform[PLATFORM_CONFIGURATION_CLAIM].product_family_code;
  const product = PRODUCTS[code.toLowerCase()] ?? code;
  let host = platform.issuer;
  try {
    host = new URL(platform.issuer).host;
  } catch {}
  return sanitizeDisplayText(`${product} (${host})`, { max: 200 }) ?? "LTI platform";
}

function urlsRefused(error: ApiError): ApiError {
  const fields = (error.errors ?? []).map((e) => `${e.path} ${e.message}`).join("; ");
  return new ApiError(
    "lti_platform_configuration_invalid",
    `The platform's OpenID configuration names a URL Lingua may not call: ${fields || error.message}.`,
  );
}

export interface Registered {
  consumer: ConsumerRow;
  platform: PlatformConfiguration;
}

export async function registerWithLink(
  ctx: ServiceContext,
  input: { link: string; configurationUrl: string; registrationToken?: string; origin: string },
): Promise<Registered> {
  const claimed = await claimLink(ctx, input.link);
  let registered: Registered;
  try {
    const platform = await fetchPlatformConfiguration(ctx, input.configurationUrl, input.registrationToken);
    // The registration's id first: the tool's URLs sent to the platform name it.
    const id = newId("ltc");
    // The platform's URLs pass the gate before anything is registered with it.
    let row: ConsumerRow;
    try {
      row = await newConsumerRow(
        ctx,
        claimed.link.institutionId,
        {
          name: registrationName(platform),
          issuer: platform.issuer,
          // Known once the platform answers.
          client_id: "",
          deployment_ids: [],
          auth_login_url: platform.authorization_endpoint,
          auth_token_url: platform.token_endpoint,
          jwks_url: platform.jwks_uri,
          // The specification's audience of the client assertion, when the platform names one.
          auth_token_audience: platform.authorization_server ?? null,
        },
        id,
      );
    } catch (error) {
      if (error instanceof ApiError && error.code === "validation_failed") throw urlsRefused(error);
      throw error;
    }
    const document = registrationDocument(input.origin, id, platform);
    const answer = await postRegistration(ctx, platform, document, input.registrationToken);
    row = {
      ...row,
      clientId: answer.clientId,
      deploymentIds: answer.deploymentId ? [answer.deploymentId] : [],
    };
    const { guard, spend } = spendLink(ctx, claimed, id);
    try {
      await commit(ctx, {
        statements: [guard, ctx.db.insert(ltiConsumers).values(row), spend],
        claims: [registrationClaim(row)],
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw duplicate();
      if (isBatchGuardFailure(error))
        throw new ApiError(
          "lti_registration_in_progress",
          "Another registration with this link finished first; this one was not stored.",
        );
      throw error;
    }
    await claimClientKey(ctx, row);
    registered = { consumer: row, platform };
  } catch (error) {
    await releaseLink(ctx, claimed).catch(() => undefined);
    throw error;
  }
  await prepareKeys(ctx, registered.consumer.id);
  return registered;
}

/**
 * The registration's signing key, made now rather than on the platform's first read of its JWKS
 * URL. The registration is stored already: a failure here is logged, and the key is made on first
 * need as for any registration.
 */
async function prepareKeys(ctx: ServiceContext, consumerId: string): Promise<void> {
  try {
    await ensureCurrentKey(ctx, consumerId);
  } catch (error) {
    console.error(
      JSON.stringify({
        level: "error",
        message: "signing key of a dynamic registration not made",
        consumer_id: consumerId,
        request_id: ctx.requestId,
        error: String(error),
      }),
    );
  }
}
