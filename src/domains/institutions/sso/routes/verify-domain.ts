import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { jsonResponse, optionalJsonBody, tokenRoute } from "../../../../platform/openapi";
import { errorResponses, ProblemSchema } from "../../../../platform/openapi-problems";
import { INSTITUTIONS } from "../../prefixes";
import { DomainVerificationSchema, SsoDomainParams, VerifyDomainBody } from "../domain-schemas";
import { verifySsoDomain } from "../domain-verification";

const problem = (description: string) => ({
  description,
  content: { "application/problem+json": { schema: ProblemSchema } },
});

export const verifySsoDomainRoute = tokenRoute("sso:write", {
  method: "post",
  path: `${INSTITUTIONS}/{id}/sso/domains/{domain}/verify`,
  tags: ["Institutions"],
  operationId: "verifySsoDomain",
  summary: "Verify an SSO e-mail domain",
  description: `Proves that the institution controls one of its SSO \`domains\`: a domain routes nobody to this connection until it is verified. Publish a TXT record at the domain itself (\`txt_name\` in \`domain_verifications\`) whose text is \`txt_value\` (\`lingua-domain-verification=<token>\`), then call this: the record is looked up now and the domain's verification answered with \`status: "verified"\`. Calling it again re-checks; a failure never unverifies.

Another institution may claim the same domain; at most one holds it verified, and the latest proof wins: verifying moves the domain from whichever institution held it (which is set back to \`pending\`), and no answer names another institution.

Body (optional): \`{ "method": "manual" }\` lets platform staff confirm a domain without DNS; anybody else gets 403.

\`422 domain_not_verified\` says what the resolver found in \`detail\` and carries the extension members \`domain\`, \`domain_status\` (unchanged) and \`reason\`: \`no_such_name\` (the domain does not exist in DNS), \`dns_error\` (its name servers answered with an error), \`no_txt_record\`, \`no_matching_record\`, or \`public_mail_domain\` (a claim on a public e-mail provider's domain stored before such claims were refused at PUT: never verified, by DNS or by staff). A domain not in the institution's configuration: 404. No resolver configured, or it did not answer: 503, nothing changed.`,
  request: { params: SsoDomainParams, body: optionalJsonBody(VerifyDomainBody) },
  responses: {
    200: jsonResponse(DomainVerificationSchema, "The domain's verification, now verified."),
    403: {
      ...errorResponses[403],
      description: 'The token lacks `sso:write`, or `method: "manual"` from anybody but platform staff.',
    },
    404: {
      ...errorResponses[404],
      description: "No such institution (or another's), or the domain is not in its configuration.",
    },
    422: problem(
      "`domain_not_verified`: the TXT record was not found (see `detail`, `reason`); or `validation_failed` for the body.",
    ),
    503: problem("`service_unavailable`: no DNS resolver is configured, or it did not answer."),
  },
});

export function registerVerifySsoDomain(app: OpenAPIHono<AppEnv>) {
  app.openapi(verifySsoDomainRoute, async (c) => {
    const { id, domain } = c.req.valid("param");
    // Without a body the validator does not run, so the default is applied here too.
    const method = c.req.valid("json")?.method ?? "dns";
    const verification = await verifySsoDomain(principalContext(c), {
      institutionId: id,
      domain,
      method,
    });
    return c.json(verification, 200);
  });
}
