import type { Context, Hono } from "hono";
import { createSession } from "../../domains/auth/service";
import { acceptInvitation } from "../../domains/members/invitations";
import { AcceptInvitationBody } from "../../domains/members/schemas";
import type { AppEnv } from "../../env";
import { ApiError } from "../../platform/errors";
import { limitByIp } from "../../platform/ratelimit/middleware";
import { IP_POLICIES } from "../../platform/ratelimit/policies";
import { field, fieldMessages, formOf, issuesOf } from "../forms";
import { html, loginCsrfToken, setSessionCookie } from "../http";
import { ErrorSummary, Layout } from "../layout";
import { roleMayUseDashboard } from "../policy";
import { ACCEPT_INVITATION_PATH, DASHBOARD } from "../prefixes";
import { CSRF_FIELD, checkLoginCsrf } from "../session";

const LABELS = { token: "Invitation", password: "Password", confirm: "Repeat the password" };

function AcceptPage({
  nonce,
  csrf,
  token,
  errors,
}: {
  nonce: string;
  csrf: string;
  token: string;
  errors: string[];
}) {
  return (
    <Layout title="Accept your invitation" nonce={nonce}>
      <h1>Choose your password</h1>
      <p>You were invited to Lingua. Choose a password to finish setting up your account.</p>
      <ErrorSummary errors={errors} />
      {token ? (
        <form method="post" action={ACCEPT_INVITATION_PATH}>
          <input type="hidden" name={CSRF_FIELD} value={csrf} />
          <input type="hidden" name="token" value={token} />
          <label for="password">{LABELS.password}</label>
          <p class="hint" id="password-hint">
            At least 10 characters. A few unrelated words make a good one.
          </p>
          <input
            id="password"
            name="password"
            type="password"
            autocomplete="new-password"
            required
            minlength={10}
            maxlength={1024}
            aria-describedby="password-hint"
            autofocus={errors.length === 0}
          />
          <label for="confirm">{LABELS.confirm}</label>
          <input
            id="confirm"
            name="confirm"
            type="password"
            autocomplete="new-password"
            required
            minlength={10}
            maxlength={1024}
          />
          <div class="actions">
            <button type="submit">Set password</button>
          </div>
        </form>
      ) : (
        <p>
          This link is incomplete: open the whole link from your invitation, or ask your administrator for a
          new one.
        </p>
      )}
    </Layout>
  );
}

function DonePage({ nonce }: { nonce: string }) {
  return (
    <Layout title="Password set" nonce={nonce}>
      <h1>Your password is set</h1>
      <p class="notice" role="status">
        Your account is active. Sign in to the Lingua app with your e-mail address and this password.
      </p>
    </Layout>
  );
}

function render(c: Context<AppEnv>, token: string, errors: string[], status = 200) {
  return html(
    c,
    <AcceptPage nonce={c.var.nonce} csrf={loginCsrfToken(c)} token={token} errors={errors} />,
    status,
  );
}

/**
 * The page an invitation URL opens: the invited person chooses a password (the members domain's
 * `acceptInvitation`, as `POST /api/auth/accept-invitation` does). An administrator is signed in to
 * the dashboard at once; anybody else is told their account is ready.
 */
export function registerAcceptInvitation(app: Hono<AppEnv>) {
  app.get(ACCEPT_INVITATION_PATH, (c) => render(c, c.req.query("token") ?? "", []));

  app.post(ACCEPT_INVITATION_PATH, limitByIp(IP_POLICIES.signIn), checkLoginCsrf, async (c) => {
    const form = await formOf(c);
    const token = field(form, "token");
    const password = field(form, "password");
    const parsed = AcceptInvitationBody.safeParse({ token, password });
    const errors = parsed.success ? [] : fieldMessages(issuesOf(parsed.error.issues), LABELS);
    if (password !== field(form, "confirm"))
      errors.push("The two passwords differ: type the same one twice.");
    if (!parsed.success || errors.length > 0) return render(c, token, errors, 422);
    const ctx = c.get("ctx");
    let user: Awaited<ReturnType<typeof acceptInvitation>>;
    try {
      user = await acceptInvitation(ctx, parsed.data);
    } catch (error) {
      if (error instanceof ApiError && error.code === "invalid_invitation")
        return render(c, "", [error.message], 400);
      // The member kept changing meanwhile: the invitation is still open, the form may be sent again.
      if (error instanceof ApiError && error.code === "conflict")
        return render(c, token, [error.message], 409);
      throw error;
    }
    if (!roleMayUseDashboard(user.role)) return html(c, <DonePage nonce={c.var.nonce} />);
    const session = await createSession(ctx, user);
    setSessionCookie(c, session.token, (Date.parse(session.expiresAt) - ctx.now()) / 1000);
    return c.redirect(DASHBOARD, 303);
  });
}
