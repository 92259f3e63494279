import { asRecord, CLAIMS, DEEP_LINKING_REQUEST, RESOURCE_LINK_REQUEST } from "../claims";
import type { ConsumerRow } from "../registrations/service";
import { isToolTarget } from "./login";
import { LaunchRefusal } from "./refusal";

/**
 * The LTI claims of a verified id_token (LTI 1.3 Core §5.3, Deep Linking 2.0 §4.4), checked in the
 * order the specification's checks go; each failure a `LaunchRefusal` naming the claim.
 */

export function checkLtiClaims(
  claims: Record<string, unknown>,
  expectedNonce: string,
  consumer: ConsumerRow,
  origin: string,
  allowHttp: boolean,
) {
  if (claims.nonce !== expectedNonce)
    throw new LaunchRefusal(
      "nonce_mismatch",
      "The id_token's `nonce` is not the one issued with this `state` (a replayed id_token?).",
      consumer,
    );
  const deployment = claims[CLAIMS.deploymentId];
  if (typeof deployment !== "string" || !consumer.deploymentIds.includes(deployment))
    throw new LaunchRefusal(
      "deployment_unknown",
      `The deployment id ${JSON.stringify(deployment ?? null)} is not registered; add it to the registration's deployment_ids.`,
      consumer,
    );
  if (claims[CLAIMS.version] !== "1.3.0")
    throw new LaunchRefusal(
      "version_unsupported",
      `LTI version ${JSON.stringify(claims[CLAIMS.version] ?? null)} is not supported; send 1.3.0.`,
      consumer,
    );
  const messageType = claims[CLAIMS.messageType];
  if (messageType !== RESOURCE_LINK_REQUEST && messageType !== DEEP_LINKING_REQUEST)
    throw new LaunchRefusal(
      "message_type_unsupported",
      `Message type ${JSON.stringify(messageType ?? null)} is not supported; this tool accepts LtiResourceLinkRequest and LtiDeepLinkingRequest.`,
      consumer,
    );
  const deepLinking = messageType === DEEP_LINKING_REQUEST;
  const missing: string[] = [];
  if (typeof claims.sub !== "string" || !claims.sub) missing.push("sub");
  if (!Array.isArray(claims[CLAIMS.roles])) missing.push(CLAIMS.roles);
  if (deepLinking) missing.push(...missingDeepLinkingSettings(claims[CLAIMS.deepLinkingSettings]));
  else {
    const link = asRecord(claims[CLAIMS.resourceLink]);
    if (!link || typeof link.id !== "string" || !link.id) missing.push(`${CLAIMS.resourceLink}.id`);
  }
  if (missing.length > 0)
    throw new LaunchRefusal(
      "claim_missing",
      `The id_token lacks required claims: ${missing.join(", ")}.`,
      consumer,
    );
  if (deepLinking) checkReturnUrl(claims[CLAIMS.deepLinkingSettings], consumer, allowHttp);
  const target = claims[CLAIMS.targetLinkUri];
  // A deep-linking request may leave target_link_uri out (the login named it); when sent it is checked.
  if (deepLinking && target === undefined) return;
  if (typeof target !== "string" || !isToolTarget(target, origin, consumer.id))
    throw new LaunchRefusal(
      "target_link_uri_foreign",
      `The target_link_uri ${JSON.stringify(target ?? null)} is not this tool's launch URL.`,
      consumer,
    );
}

const isStringArray = (value: unknown) => Array.isArray(value) && value.every((v) => typeof v === "string");

/**
 * The deep-linking settings' required fields (LTI Deep Linking 2.0 §4.4.1) that are absent or of the
 * wrong type, named as the claim's paths.
 */
function missingDeepLinkingSettings(value: unknown): string[] {
  const settings = asRecord(value);
  const name = CLAIMS.deepLinkingSettings;
  if (!settings) return [name];
  const missing: string[] = [];
  if (typeof settings.deep_link_return_url !== "string" || !settings.deep_link_return_url)
    missing.push(`${name}.deep_link_return_url`);
  if (!isStringArray(settings.accept_types)) missing.push(`${name}.accept_types`);
  if (!isStringArray(settings.accept_presentation_document_targets))
    missing.push(`${name}.accept_presentation_document_targets`);
  return missing;
}

/**
 * The return URL is where the browser posts the response (a form's action): an absolute https URL
 * without credentials (http only where the deployment allows loopback targets, in development). Not
 * the outbound gate's address rules: the worker never requests it, and an LMS on an intranet is fine.
 */
function checkReturnUrl(value: unknown, consumer: ConsumerRow, allowHttp: boolean): void {
  const raw = asRecord(value)?.deep_link_return_url as string;
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {}
  const scheme = url?.protocol === "https:" || (allowHttp && url?.protocol === "http:");
  if (!url || !scheme || url.username || url.password || raw.length > 2048)
    throw new LaunchRefusal(
      "claim_invalid",
      `The deep_linking_settings' deep_link_return_url ${JSON.stringify(raw)} is not an absolute https URL without credentials.`,
      consumer,
    );
}
