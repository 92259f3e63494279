import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerGetOidcCertificate } from "./oidc/routes/get-oidc-certificate";
import { registerGetOidcJwks } from "./oidc/routes/get-oidc-jwks";
import { registerRotateOidcKeys } from "./oidc/routes/rotate-oidc-keys";
import { registerBeginSsoSignIn } from "./routes/begin-sso-sign-in";
import { registerExchangeSsoCode } from "./routes/exchange-sso-code";
import { registerListSsoSignIns } from "./routes/list-sso-sign-ins";
import { registerOidcCallback } from "./routes/oidc-callback";
import { registerSamlAcs } from "./saml/routes/saml-acs";

/** SSO sign-in's routes below `/api/auth/sso` (loaded with the auth group). */
export function registerSsoSignIn(app: OpenAPIHono<AppEnv>) {
  registerBeginSsoSignIn(app);
  registerExchangeSsoCode(app);
  registerOidcCallback(app);
  registerSamlAcs(app);
}

/** The SSO log and the OIDC client keys, below `/api/institutions/{id}` (loaded with the institutions group). */
export function registerSsoLog(app: OpenAPIHono<AppEnv>) {
  registerListSsoSignIns(app);
  registerGetOidcJwks(app);
  registerGetOidcCertificate(app);
  registerRotateOidcKeys(app);
}
