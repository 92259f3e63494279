import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import type { AppEnv } from "../../../../env";
import { ApiError } from "../../../../platform/errors";
import { publicRoute } from "../../../../platform/openapi";
import { errorResponses, institutionMovingResponse } from "../../../../platform/openapi-problems";
import { STATE_COOKIE_PREFIX, stateCookie } from "../../pending";
import { AUTH_SSO, LANDING_PATH } from "../../prefixes";
import { SSO_LIMIT_NOTE, ssoLimit } from "../../routes/begin-sso-sign-in";
import { reasonsText } from "../../schemas";
import { type AcsForm, samlAcs } from "../acs";

const AcsParams = z.object({
  id: z.string().openapi({ param: { name: "id", in: "path" }, example: "ins_acme" }),
});
const AcsFormSchema = z
  .object({
    SAMLResponse: z.string().openapi({ description: "The Response, base64 (HTTP-POST binding)." }),
    RelayState: z.string().optional().openapi({
      description: "Sent back as Lingua sent it with the AuthnRequest (the pending sign-in's state).",
    }),
  })
  .openapi("SamlAcsForm");

export const samlAcsRoute = publicRoute(
  {
    method: "post",
    path: `${AUTH_SSO}/saml/{id}/acs`,
    tags: ["Authentication"],
    operationId: "ssoSamlAcs",
    summary: "SAML assertion consumer service (the IdP's browser posts the Response here)",
    description: `The ACS URL the SSO settings announce (\`saml.sp.acs_url\`), HTTP-POST binding: the IdP's page posts \`SAMLResponse\` (and \`RelayState\`) here as a form. **SP-initiated** (the Response has \`InResponseTo\`): \`RelayState\` must name the pending sign-in \`GET /api/auth/sso\` started (single use, 10 minutes, this institution's, with the browser's \`sso_state_<state>\` cookie), and \`InResponseTo\` must be its AuthnRequest's ID. **IdP-initiated** (no \`InResponseTo\`): accepted only when the institution turned \`saml.idp_initiated\` on; \`RelayState\` is ignored. Then the Response is verified: parsed without DTDs; exactly one assertion, directly in the Response, no ID twice, signatures only directly in the Response or the assertion (signature wrapping is refused); each signature verified with the configured certificates only (never one the Response carries), exclusive c14n with the enveloped-signature transform, RSA or ECDSA with SHA-256/384/512 (SHA-1 refused, signature and digest), its one Reference pointing at the element it sits in; status \`Success\`; \`Issuer\` = \`saml.idp_entity_id\`; \`Destination\` and the bearer \`Recipient\` = this URL; \`Audience\` = our entity id; \`NotBefore\`/\`NotOnOrAfter\` of the conditions and of the confirmation with 60 s of skew; no comment inside a value read; the assertion's ID not used before (kept until it expires). The person is read through \`attribute_mapping\` (the e-mail from the mapped attribute, else an e-mail NameID; the NameID is the IdP subject). The member is found by (institution, NameID), else by e-mail within the institution's verified domains, else created just in time (as for OIDC). Then 303 to \`${LANDING_PATH}\` with \`#code=…\` (single use, 60 s) for \`POST /api/auth/sso/session\`. Every sign-in and refusal is written to the SSO log. A refusal answers \`400 sso_sign_in_refused\` with \`reason\` and \`sign_in_id\`: ${reasonsText}. ${SSO_LIMIT_NOTE}`,
    middleware: [ssoLimit],
    request: {
      params: AcsParams,
      body: { required: true, content: { "application/x-www-form-urlencoded": { schema: AcsFormSchema } } },
    },
    responses: {
      503: institutionMovingResponse,
      303: {
        description: "To the landing page, the single-use code in the URL fragment.",
        headers: { Location: { schema: { type: "string" as const } } },
      },
      400: {
        ...errorResponses[400],
        description: "`sso_sign_in_refused`: `reason` and `sign_in_id` say why.",
      },
      409: {
        ...errorResponses[409],
        description: "`conflict`: the member kept changing while the sign-in was applied; sign in again.",
      },
      415: { ...errorResponses[415], description: "The body is not `application/x-www-form-urlencoded`." },
    },
  },
  { countedPerIp: true },
);

async function readForm(c: Context): Promise<AcsForm> {
  const type = c.req.header("Content-Type") ?? "";
  if (!/^application\/x-www-form-urlencoded|^multipart\/form-data/i.test(type))
    throw new ApiError(
      "unsupported_media_type",
      "Post the SAMLResponse as `application/x-www-form-urlencoded`.",
    );
  const body = await c.req.parseBody();
  const text = (value: unknown) => (typeof value === "string" ? value : undefined);
  return { SAMLResponse: text(body.SAMLResponse), RelayState: text(body.RelayState) };
}

export function registerSamlAcs(app: OpenAPIHono<AppEnv>) {
  app.openAPIRegistry.registerPath(samlAcsRoute);
  app.post(`${AUTH_SSO}/saml/:id/acs`, ssoLimit, async (c) => {
    const form = await readForm(c);
    const origin = new URL(c.req.url).origin;
    c.header("Cache-Control", "no-store");
    // The pending sign-in's cookie is spent either way.
    if (form.RelayState && getCookie(c, STATE_COOKIE_PREFIX + form.RelayState) !== undefined)
      c.header("Set-Cookie", stateCookie(form.RelayState, "", 0));
    const signedIn = await samlAcs(c.get("ctx"), {
      institutionId: c.req.param("id"),
      form,
      origin,
      cookie: (state) => getCookie(c, STATE_COOKIE_PREFIX + state),
    });
    return c.redirect(`${origin}${LANDING_PATH}#code=${encodeURIComponent(signedIn.code)}`, 303);
  });
}
