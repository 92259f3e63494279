import { SignJWT } from "jose";
import { randomBytes, toBase64Url } from "../../../platform/crypto/encoding";
import type { ServiceContext } from "../../../platform/service/context";
import { CLAIMS, DEEP_LINKING_RESPONSE, RESOURCE_LINK_ITEM } from "../claims";
import type { LaunchRow } from "../launch/launch-log";
import type { ConsumerRow } from "../registrations/service";
import { currentSigningKey } from "../registrations/signing-keys";
import { registrationCallbackPath } from "../registrations/tool-urls";

/** How long the platform may take to receive the response once it is built. */
const RESPONSE_TTL_SECONDS = 10 * 60;

/** A chosen item, its course or lesson found published. */
export interface ChosenItem {
  type: "course" | "lesson";
  id: string;
  title: string;
  lineItem?: { scoreMaximum: number; label: string; tag?: string };
}

/**
 * The `ltiResourceLink` content item of a chosen course or lesson. Its `url` is the registration's
 * launch URL with `?course=` / `?lesson=` (what `resolveTarget` reads of a target_link_uri), and its
 * `custom` names the same target (which `resolveTarget` reads first): a platform that keeps either
 * launches the link into that course or lesson.
 */
export function contentItem(origin: string, consumerId: string, item: ChosenItem): Record<string, unknown> {
  const url = new URL(`${origin}${registrationCallbackPath(consumerId)}`);
  url.searchParams.set(item.type, item.id);
  return {
    type: RESOURCE_LINK_ITEM,
    title: item.title,
    url: url.toString(),
    custom: item.type === "course" ? { lingua_course_id: item.id } : { lingua_lesson_id: item.id },
    ...(item.lineItem
      ? {
          lineItem: {
            scoreMaximum: item.lineItem.scoreMaximum,
            label: item.lineItem.label,
            resourceId: item.id,
            ...(item.lineItem.tag !== undefined ? { tag: item.lineItem.tag } : {}),
          },
        }
      : {}),
  };
}

/**
 * The `LtiDeepLinkingResponse` JWT (LTI Deep Linking 2.0 §4.5), signed RS256 with the registration's
 * current key (its `kid` in the header, published at the registration's JWKS URL): `iss` the client
 * id, `aud` the platform's issuer, a fresh `nonce`, `iat`/`exp` (10 minutes), the launch's deployment
 * id, the message type and version, the request's `data` echoed unchanged when it carried one, and
 * the content items.
 */
export async function signResponse(
  ctx: ServiceContext,
  input: { consumer: ConsumerRow; launch: LaunchRow; items: Record<string, unknown>[] },
): Promise<string> {
  const { consumer, launch, items } = input;
  const key = await currentSigningKey(ctx, consumer.id);
  const iat = Math.floor(ctx.now() / 1000);
  const data = launch.deepLinking?.data;
  return new SignJWT({
    nonce: toBase64Url(randomBytes(16)),
    [CLAIMS.deploymentId]: launch.deploymentId,
    [CLAIMS.messageType]: DEEP_LINKING_RESPONSE,
    [CLAIMS.version]: "1.3.0",
    [CLAIMS.deepLinkingContentItems]: items,
    ...(data !== undefined ? { [CLAIMS.deepLinkingData]: data } : {}),
  })
    .setProtectedHeader({ alg: "RS256", typ: "JWT", kid: key.kid })
    .setIssuer(consumer.clientId)
    .setAudience(consumer.issuer)
    .setIssuedAt(iat)
    .setExpirationTime(iat + RESPONSE_TTL_SECONDS)
    .sign(key.privateKey);
}
