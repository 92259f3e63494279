import { z } from "@hono/zod-openapi";
import { ApiError } from "../../../../platform/errors";
import type { ServiceContext } from "../../../../platform/service/context";
import { postForJson } from "../../outbound";
import { toolUrls } from "../tool-urls";
import { PLATFORM_CONFIGURATION_CLAIM, type PlatformConfiguration } from "./platform-configuration";

/**
 * The tool's registration (LTI Dynamic Registration 1.0, "Tool configuration"): an OpenID Connect
 * client registration with the LTI tool configuration, posted to the platform's
 * `registration_endpoint`; the platform answers it with the `client_id` it gave the tool and,
 * usually, the `deployment_id` it made.
 */

export const TOOL_CONFIGURATION_CLAIM = "https://purl.imsglobal.org/spec/lti-tool-configuration";
export const TOOL_NAME = "Lingua";

/** The services a registration asks for: grades (AGS: line items, results, scores) and rosters (NRPS). */
export const REGISTRATION_SCOPES = [
  "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
  "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly",
  "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
  "https://purl.imsglobal.org/spec/lti-ags/scope/score",
  "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly",
] as const;

/** The claims a launch should carry: who the person is (Lingua links people by `sub`, shows the name). */
export const REGISTRATION_CLAIMS = ["iss", "sub", "name", "given_name", "family_name", "email"] as const;

/**
 * The registration document for registration `consumerId` (its URLs name it, as a hand-made
 * registration's do). The deep-linking message is offered when the platform supports it; Canvas
 * gets its own placement names and the privacy level that shares name and e-mail.
 */
export function registrationDocument(origin: string, consumerId: string, platform: PlatformConfiguration) {
  const tool = toolUrls(origin, consumerId);
  const lti = platform[PLATFORM_CONFIGURATION_CLAIM];
  const canvas = lti.product_family_code.toLowerCase() === "canvas";
  const supports = (type: string) => lti.messages_supported.some((message) => message.type === type);
  const messages: Record<string, unknown>[] = [
    { type: "LtiResourceLinkRequest", target_link_uri: tool.launch_url, label: TOOL_NAME },
  ];
  if (supports("LtiDeepLinkingRequest"))
    messages.push({
      type: "LtiDeepLinkingRequest",
      target_link_uri: tool.launch_url,
      label: `${TOOL_NAME}: add a course or lesson`,
      placements: canvas ? ["assignment_selection", "link_selection"] : ["ContentArea"],
    });
  return {
    application_type: "web",
    response_types: ["id_token"],
    grant_types: ["implicit", "client_credentials"],
    initiate_login_uri: tool.login_url,
    redirect_uris: tool.redirect_uris,
    client_name: TOOL_NAME,
    jwks_uri: tool.jwks_url,
    token_endpoint_auth_method: "private_key_jwt",
    scope: REGISTRATION_SCOPES.join(" "),
    [TOOL_CONFIGURATION_CLAIM]: {
      domain: new URL(origin).host,
      description: "Language courses and lessons, with single sign-on and grades back to the LMS.",
      target_link_uri: tool.launch_url,
      claims: [...REGISTRATION_CLAIMS],
      messages,
      ...(canvas ? { "https://canvas.instructure.com/lti/privacy_level": "public" } : {}),
    },
  };
}

const Identifier = z.union([z.string(), z.number()]).transform((value) => String(value).trim());

const RegistrationAnswer = z.object({
  client_id: Identifier.pipe(z.string().min(1, "must not be empty").max(255)),
  [TOOL_CONFIGURATION_CLAIM]: z
    .object({ deployment_id: Identifier.pipe(z.string().max(255)).optional() })
    .optional(),
});

function rejected(detail: string): ApiError {
  return new ApiError("lti_registration_rejected", detail);
}

/** A short, single-line excerpt of the platform's answer for the error page. */
function excerpt(body: string | null): string {
  const text = (body ?? "").replace(/\s+/g, " ").trim();
  if (!text) return "";
  return `: ${text.length > 300 ? `${text.slice(0, 300)}…` : text}`;
}

/** Posts the registration; the platform's `client_id` and deployment id (null when it made none). */
export async function postRegistration(
  ctx: ServiceContext,
  platform: PlatformConfiguration,
  document: ReturnType<typeof registrationDocument>,
  registrationToken: string | undefined,
): Promise<{ clientId: string; deploymentId: string | null }> {
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    Accept: "application/json",
  };
  if (registrationToken) headers.Authorization = `Bearer ${registrationToken}`;
  const outcome = await postForJson(ctx, platform.registration_endpoint, headers, JSON.stringify(document));
  if (!outcome.ok)
    throw rejected(
      `The platform's registration endpoint refused the registration (${outcome.error ?? "failed"})${excerpt(outcome.responseBody)}.`,
    );
  let answer: unknown;
  try {
    answer = JSON.parse(outcome.responseBody ?? "");
  } catch {
    throw rejected("The platform's registration endpoint answered something that is not JSON.");
  }
  const parsed = RegistrationAnswer.safeParse(answer);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) => `${issue.path.map(String).join(".")}: ${issue.message}`,
    );
    throw rejected(`The platform's registration answer is not usable: ${problems.join("; ")}.`);
  }
  const deploymentId = parsed.data[TOOL_CONFIGURATION_CLAIM]?.deployment_id;
  return { clientId: parsed.data.client_id, deploymentId: deploymentId ? deploymentId : null };
}
