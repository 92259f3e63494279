import type { Context, Hono } from "hono";
import { raw } from "hono/html";
import { beginSsoSignIn } from "../../domains/sso/begin";
import { exchangeSsoCode } from "../../domains/sso/session";
import { revokeToken } from "../../domains/tokens/service";
import type { AppEnv } from "../../env";
import { admitToken } from "../../platform/auth/middleware";
import { ApiError } from "../../platform/errors";
import { limitByIp } from "../../platform/ratelimit/middleware";
import { IP_POLICIES } from "../../platform/ratelimit/policies";
import type { PrincipalContext } from "../../platform/service/context";
import { PageError } from "../errors";
import { field, formOf } from "../forms";
import { html, loginCsrfToken, setSessionCookie } from "../http";
import { ErrorSummary, Layout } from "../layout";
import { NOT_FOR_YOUR_ROLE, roleMayUseDashboard } from "../policy";
import { DASHBOARD, SIGN_IN_PATH } from "../prefixes";
import { CSRF_FIELD, checkLoginCsrf } from "../session";

/**
 * Sign-in through the institution's identity provider, the dashboard's side. The sign-in page's
 * "Sign in with SSO" form starts here (`/dashboard/sso/start`, the same service as
 * `GET /api/auth/sso`); the IdP's callback lands on `/dashboard/sso#code=…`, whose nonce'd script
 * posts the fragment's code back here; that post exchanges it through the same service as
 * `POST /api/auth/sso/session` and sets the dashboard's session cookie.
 */
export const SSO_PATH = `${DASHBOARD}/sso`;
export const SSO_START_PATH = `${SSO_PATH}/start`;

/** Reads the code from the fragment (never sent to a server by the browser), then posts it. */
const LANDING_SCRIPT = `(function () {
  var match = /[#&]code=([^&]+)/.exec(location.hash);
  var form = document.getElementById("sso-exchange");
  if (!match || !form) return;
  history.replaceState(null, "", location.pathname);
  form.elements.code.value = decodeURIComponent(match[1]);
  form.submit();
})();`;

function LandingPage({ nonce, csrf, errors }: { nonce: string; csrf: string; errors: string[] }) {
  return (
    <Layout title="Signing in" nonce={nonce}>
      <h1>Signing you in…</h1>
      <ErrorSummary errors={errors} />
      <form id="sso-exchange" method="post" action={SSO_PATH}>
        <input type="hidden" name={CSRF_FIELD} value={csrf} />
        <input type="hidden" name="code" value="" />
        <noscript>
          <p>This page needs JavaScript to finish signing you in.</p>
        </noscript>
      </form>
      <p class="hint">
        Nothing happening? <a href={SIGN_IN_PATH}>Start again from the sign-in page</a>.
      </p>
      <script nonce={nonce}>{raw(LANDING_SCRIPT)}</script>
    </Layout>
  );
}

function landing(c: Context<AppEnv>, errors: string[] = [], status = 200) {
  return html(c, <LandingPage nonce={c.var.nonce} csrf={loginCsrfToken(c)} errors={errors} />, status);
}

function NoSsoPage({ nonce, email }: { nonce: string; email: string }) {
  return (
    <Layout title="No single sign-on" nonce={nonce}>
      <h1>No single sign-on for this address</h1>
      <ErrorSummary
        errors={[
          `No institution signs ${email || "this address"} in through its identity provider. Sign in with your password instead.`,
        ]}
      />
      <div class="actions">
        <a class="button" href={SIGN_IN_PATH}>
          Back to sign-in
        </a>
      </div>
    </Layout>
  );
}

/** The sign-in page's "Sign in with SSO" form. */
export function SsoForm({ email }: { email: string }) {
  return (
    <form method="get" action={SSO_START_PATH} class="sso">
      <h2>Sign in with SSO</h2>
      <label for="sso-email">Work e-mail address</label>
      <input
        id="sso-email"
        name="email"
        type="email"
        autocomplete="username"
        required
        maxlength={254}
        value={email}
      />
      <div class="actions">
        <button type="submit" class="secondary">
          Sign in with SSO
        </button>
      </div>
    </form>
  );
}

/** Shown on the sign-in page after a password was refused with `sso_required`. */
export function SsoRequired({ email }: { email: string }) {
  return (
    <div class="error-summary" role="alert">
      <h2>Your institution uses single sign-on</h2>
      <p>
        Members at this address sign in through their institution's identity provider, not with a password.{" "}
        <a href={`${SSO_START_PATH}?email=${encodeURIComponent(email)}`}>Sign in with SSO</a>.
      </p>
    </div>
  );
}

export function registerSso(app: Hono<AppEnv>) {
  const limit = limitByIp(IP_POLICIES.sso);

  app.get(SSO_START_PATH, limit, async (c) => {
    const email = (c.req.query("email") ?? "").trim().slice(0, 254);
    try {
      const begun = await beginSsoSignIn(c.get("ctx"), { email, origin: new URL(c.req.url).origin });
      c.header("Set-Cookie", begun.cookie);
      return c.redirect(begun.location, 302);
    } catch (error) {
      if (error instanceof ApiError && error.code === "sso_not_configured")
        return html(c, <NoSsoPage nonce={c.var.nonce} email={email} />, 404);
      throw error;
    }
  });

  app.get(SSO_PATH, (c) => landing(c));

  app.post(SSO_PATH, limit, checkLoginCsrf, async (c) => {
    const form = await formOf(c);
    const ctx = c.get("ctx");
    let session: Awaited<ReturnType<typeof exchangeSsoCode>>;
    try {
      session = await exchangeSsoCode(ctx, field(form, "code").slice(0, 256));
    } catch (error) {
      if (error instanceof ApiError && error.code === "invalid_credentials")
        return landing(c, [`${error.message}`], 401);
      throw error;
    }
    if (!roleMayUseDashboard(session.user.role)) {
      // As after a password: a session the dashboard will not use is revoked at once.
      await admitToken(c, session.token);
      await revokeToken(c.get("ctx") as PrincipalContext, session.tokenId);
      throw new PageError(403, "This dashboard is not for your account", NOT_FOR_YOUR_ROLE);
    }
    setSessionCookie(c, session.token, (Date.parse(session.expiresAt) - ctx.now()) / 1000);
    return c.redirect(DASHBOARD, 303);
  });
}
