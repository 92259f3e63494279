import type { Context, Hono } from "hono";
import { SignInBody } from "../../domains/auth/schemas";
import { signIn } from "../../domains/auth/service";
import { revokeToken } from "../../domains/tokens/service";
import type { AppEnv } from "../../env";
import { admitToken } from "../../platform/auth/middleware";
import { ApiError } from "../../platform/errors";
import { clientIp, limitByIp } from "../../platform/ratelimit/middleware";
import { IP_POLICIES } from "../../platform/ratelimit/policies";
import type { PrincipalContext } from "../../platform/service/context";
import { PageError } from "../errors";
import { field, fieldMessages, formOf, issuesOf } from "../forms";
import { clearSessionCookies, html, loginCsrfToken, safeNext, setSessionCookie } from "../http";
import { ErrorSummary, Layout } from "../layout";
import { NOT_FOR_YOUR_ROLE, roleMayUseDashboard } from "../policy";
import { DASHBOARD, SIGN_IN_PATH, SIGN_OUT_PATH } from "../prefixes";
import { CSRF_FIELD, checkCsrf, checkLoginCsrf, signedIn } from "../session";
import { SsoForm, SsoRequired } from "./sso";

const LABELS = { email: "E-mail address", password: "Password" };

interface SignInForm {
  email: string;
  next: string;
  errors: string[];
  notice?: string;
  /** The address whose institution enforces SSO (403 `sso_required`): the page offers its link. */
  sso?: string;
}

function SignInPage({ nonce, csrf, form }: { nonce: string; csrf: string; form: SignInForm }) {
  return (
    <Layout title="Sign in" nonce={nonce}>
      <h1>Sign in to the dashboard</h1>
      {form.notice ? (
        <p class="notice" role="status">
          {form.notice}
        </p>
      ) : null}
      <ErrorSummary errors={form.errors} />
      {form.sso !== undefined ? <SsoRequired email={form.sso} /> : null}
      <form method="post" action={SIGN_IN_PATH}>
        <input type="hidden" name={CSRF_FIELD} value={csrf} />
        <input type="hidden" name="next" value={form.next} />
        <label for="email">{LABELS.email}</label>
        <input
          id="email"
          name="email"
          type="email"
          autocomplete="username"
          required
          maxlength={254}
          value={form.email}
          autofocus={form.errors.length === 0}
        />
        <label for="password">{LABELS.password}</label>
        <input
          id="password"
          name="password"
          type="password"
          autocomplete="current-password"
          required
          maxlength={1024}
        />
        <div class="actions">
          <button type="submit">Sign in</button>
        </div>
      </form>
      <SsoForm email={form.email} />
      <p class="hint">
        For institution administrators. Invited? Open the link in your invitation to choose a password.
      </p>
    </Layout>
  );
}

function renderSignIn(c: Context<AppEnv>, form: SignInForm, status = 200) {
  return html(c, <SignInPage nonce={c.var.nonce} csrf={loginCsrfToken(c)} form={form} />, status);
}

/**
 * A session token the dashboard will not use (a learner's or an instructor's correct password) is
 * revoked at once, through the tokens service as any sign-out is, so no unused session lingers.
 */
async function revokeUnusedSession(c: Context<AppEnv>, token: string, tokenId: string) {
  await admitToken(c, token);
  await revokeToken(c.get("ctx") as PrincipalContext, tokenId);
}

/** Sign in, and sign out: the API's sign-in service, its rate limits, its session tokens. */
export function registerSignIn(app: Hono<AppEnv>) {
  app.get(SIGN_IN_PATH, (c) =>
    renderSignIn(c, {
      email: "",
      next: safeNext(c.req.query("next"), DASHBOARD),
      errors: [],
      notice: c.req.query("signed_out") === "1" ? "You have signed out." : undefined,
    }),
  );

  app.post(SIGN_IN_PATH, limitByIp(IP_POLICIES.signIn), checkLoginCsrf, async (c) => {
    const form = await formOf(c);
    const email = field(form, "email");
    const next = safeNext(field(form, "next"), DASHBOARD);
    const parsed = SignInBody.safeParse({ email, password: field(form, "password") });
    if (!parsed.success)
      return renderSignIn(
        c,
        { email, next, errors: fieldMessages(issuesOf(parsed.error.issues), LABELS) },
        422,
      );
    const ctx = c.get("ctx");
    let session: Awaited<ReturnType<typeof signIn>>;
    try {
      session = await signIn(ctx, {
        ...parsed.data,
        clientAddress: clientIp(c),
        origin: new URL(c.req.url).origin,
      });
    } catch (error) {
      if (error instanceof ApiError && error.code === "invalid_credentials")
        return renderSignIn(c, { email, next, errors: [error.message] }, 401);
      if (error instanceof ApiError && error.code === "sso_required")
        return renderSignIn(c, { email, next, errors: [], sso: email }, 403);
      throw error;
    }
    if (!roleMayUseDashboard(session.user.role)) {
      await revokeUnusedSession(c, session.token, session.tokenId);
      throw new PageError(403, "This dashboard is not for your account", NOT_FOR_YOUR_ROLE);
    }
    setSessionCookie(c, session.token, (Date.parse(session.expiresAt) - ctx.now()) / 1000);
    return c.redirect(next, 303);
  });

  app.post(SIGN_OUT_PATH, signedIn, checkCsrf, async (c) => {
    const { ctx, principal } = c.var.dashboard;
    // The session token revokes itself, as `DELETE /api/integrations/tokens/{own id}` does.
    await revokeToken(ctx, principal.token.id);
    clearSessionCookies(c);
    return c.redirect(`${SIGN_IN_PATH}?signed_out=1`, 303);
  });
}
