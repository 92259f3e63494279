import { z } from "@hono/zod-openapi";
import { ApiError } from "../../../../platform/errors";
import type { ServiceContext } from "../../../../platform/service/context";
import { getJson } from "../../outbound";

/**
 * The platform's OpenID configuration (LTI Dynamic Registration 1.0, "Platform configuration"):
 * fetched through the outbound gate, held to the fields the specification requires of an LTI
 * platform, and to its rule that the `issuer` is a prefix of the configuration's URL, so that a
 * configuration cannot claim another platform's issuer.
 */

export const PLATFORM_CONFIGURATION_CLAIM = "https://purl.imsglobal.org/spec/lti-platform-configuration";
const MAX_URL = 2048;

const Url = z.string().min(1, "must not be empty").max(MAX_URL);
const Strings = z.array(z.string());
const listing = (value: string) => Strings.refine((list) => list.includes(value), `must include "${value}"`);

const PlatformConfiguration = z.object({
  issuer: Url,
  authorization_endpoint: Url,
  registration_endpoint: Url,
  jwks_uri: Url,
  token_endpoint: Url,
  token_endpoint_auth_methods_supported: listing("private_key_jwt"),
  token_endpoint_auth_signing_alg_values_supported: listing("RS256"),
  id_token_signing_alg_values_supported: listing("RS256"),
  response_types_supported: listing("id_token"),
  scopes_supported: Strings,
  subject_types_supported: Strings,
  claims_supported: Strings,
  authorization_server: Url.optional(),
  [PLATFORM_CONFIGURATION_CLAIM]: z.object({
    product_family_code: z.string().min(1, "must not be empty").max(255),
    version: z.string().min(1, "must not be empty").max(255),
    messages_supported: z.array(z.object({ type: z.string().min(1), placements: Strings.optional() })),
  }),
});

export type PlatformConfiguration = z.infer<typeof PlatformConfiguration>;

function invalid(detail: string): ApiError {
  return new ApiError("lti_platform_configuration_invalid", detail);
}

/**
 * Whether `issuer` is a prefix of `url` on a boundary: `https://lms.example` prefixes
 * `https://lms.example/api/…` but not `https://lms.example.evil.test/…`.
 */
export function issuerPrefixes(issuer: string, url: string): boolean {
  if (!url.startsWith(issuer)) return false;
  if (issuer.endsWith("/") || url.length === issuer.length) return true;
  return ["/", "?", "#"].includes(url.charAt(issuer.length));
}

/** Refusals a platform administrator can act on, each naming the field. */
export function configurationProblems(
  configurationUrl: string,
  document: unknown,
): { configuration: PlatformConfiguration } | { problems: string[] } {
  const parsed = PlatformConfiguration.safeParse(document);
  if (!parsed.success)
    return {
      problems: parsed.error.issues.map((issue) => {
        const path = issue.path.map(String).join(".") || "(the document)";
        return `${path}: ${issue.code === "invalid_type" && /received undefined$/.test(issue.message) ? "is required" : issue.message}`;
      }),
    };
  const { issuer } = parsed.data;
  let issuerUrl: URL | null = null;
  try {
    issuerUrl = new URL(issuer);
  } catch {}
  if (!issuerUrl || !/^https?:$/.test(issuerUrl.protocol))
    return { problems: [`issuer: "${issuer}" is not an http(s) URL`] };
  if (!issuerPrefixes(issuer, configurationUrl))
    return {
      problems: [
        `issuer: "${issuer}" is not a prefix of the configuration URL ${configurationUrl} (LTI Dynamic Registration requires it)`,
      ],
    };
  return { configuration: parsed.data };
}

/** The platform's configuration, read with the registration token (when the platform gave one). */
export async function fetchPlatformConfiguration(
  ctx: ServiceContext,
  configurationUrl: string,
  registrationToken: string | undefined,
): Promise<PlatformConfiguration> {
  let document: unknown;
  try {
    document = await getJson(
      ctx,
      configurationUrl,
      "application/json",
      registrationToken ? { Authorization: `Bearer ${registrationToken}` } : {},
    );
  } catch (error) {
    const reason =
      error instanceof SyntaxError
        ? "its answer is not JSON (or larger than 64 KiB)"
        : error instanceof Error
          ? error.message
          : String(error);
    throw invalid(`The platform's OpenID configuration could not be read: ${reason}.`);
  }
  const checked = configurationProblems(configurationUrl, document);
  if ("problems" in checked)
    throw invalid(`The platform's OpenID configuration is not valid: ${checked.problems.join("; ")}.`);
  return checked.configuration;
}
