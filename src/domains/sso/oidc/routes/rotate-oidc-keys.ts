import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { INSTITUTIONS } from "../../prefixes";
import { rotateClientKeys } from "../client-keys";
import { InstitutionParam, SsoKeyRotationSchema } from "./schemas";

export const rotateOidcKeysRoute = tokenRoute("sso:write", {
  method: "post",
  path: `${INSTITUTIONS}/{id}/sso/oidc/keys/rotate`,
  tags: ["Institutions"],
  operationId: "rotateSsoOidcKeys",
  summary: "Rotate the institution's OIDC client key",
  description:
    "Makes a new key the one Lingua signs the institution's `private_key_jwt` assertions with, at once; the previous one stays in `oidc.jwks_uri` for 7 days, so a provider that fetched the key set before keeps accepting assertions until it fetches again. A provider given the keys by upload rather than by URL needs the new key uploaded (Microsoft Entra ID: the new key's certificate, from `…/sso/oidc/certificate`); until then it refuses the assertions. The institution's admins (`sso:write`) and platform staff; no OIDC connection: 404.",
  request: { params: InstitutionParam },
  responses: { 200: jsonResponse(SsoKeyRotationSchema, "The institution's keys after the rotation.") },
});

export function registerRotateOidcKeys(app: OpenAPIHono<AppEnv>) {
  app.openapi(rotateOidcKeysRoute, async (c) => {
    const { current, retired, keys } = await rotateClientKeys(principalContext(c), c.req.valid("param").id);
    return c.json(
      {
        current_kid: current.id,
        retired_kid: retired?.id ?? null,
        retired_key_published_until: retired?.publishedUntil ?? null,
        keys,
      },
      200,
    );
  });
}
