import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { AppEnv } from "../env";
import { ERROR_CATALOGUE } from "../platform/error-catalogue";
import { toApiError } from "../platform/errors";
import { provideContext } from "../platform/http/context-middleware";
import { responseHeaders } from "../platform/http/middleware";
import { assetFor } from "./assets";
import { PageError } from "./errors";
import { html, pageHeaders } from "./http";
import { Layout } from "./layout";
import { ASSETS_PATH, DASHBOARD, MEMBERS_BULK_PATH, SIGN_IN_PATH } from "./prefixes";
import { registerAcceptInvitation } from "./routes/accept-invitation";
import { registerAnalytics } from "./routes/analytics";
import { registerBilling } from "./routes/billing";
import { MAX_UPLOAD_BYTES, registerBulkUpload } from "./routes/bulk-upload";
import { registerExports } from "./routes/exports";
import { registerHome } from "./routes/home";
import { registerLti } from "./routes/lti";
import { registerMembers } from "./routes/members";
import { registerSettings } from "./routes/settings";
import { registerSignIn } from "./routes/sign-in";
import { registerSso } from "./routes/sso";
import { registerTokens } from "./routes/tokens";
import { registerWebhookActions } from "./routes/webhook-actions";
import { registerWebhooks } from "./routes/webhooks";
import { registerXapi } from "./routes/xapi";

/** Forms are small; anything larger is refused before it is parsed. */
const MAX_FORM_BYTES = 64 * 1024;

function ErrorPage({
  nonce,
  title,
  detail,
  requestId,
}: {
  nonce: string;
  title: string;
  detail: string;
  requestId: string;
}) {
  return (
    <Layout title={title} nonce={nonce}>
      <h1>{title}</h1>
      <p>{detail}</p>
      <div class="actions">
        <a class="button" href={DASHBOARD}>
          Go to the dashboard
        </a>
        <a class="button secondary" href={SIGN_IN_PATH}>
          Sign in
        </a>
      </div>
      <p class="hint">
        Request id: <code>{requestId}</code>
      </p>
    </Layout>
  );
}

function errorPage(
  c: Context<AppEnv>,
  status: number,
  title: string,
  detail: string,
  headers: Record<string, string>,
) {
  for (const [name, value] of Object.entries(headers)) c.header(name, value);
  return html(
    c,
    <ErrorPage nonce={c.var.nonce} title={title} detail={detail} requestId={c.var.requestId} />,
    status,
  );
}

/**
 * The admin dashboard's app: server-rendered pages over the domains' services, with the request id
 * and security headers every response of the worker carries, a nonce-based CSP on every page, and
 * errors answered as pages rather than problem documents.
 */
export function dashboardApp(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("*", responseHeaders);
  app.use("*", pageHeaders);
  app.use("*", provideContext);
  const formLimit = bodyLimit({
    maxSize: MAX_FORM_BYTES,
    onError: () => {
      throw new PageError(413, "That form is too large", "Send less text, or split it up.");
    },
  });
  // A members CSV may be as large as the API accepts (5 MiB), on its one path.
  const uploadLimit = bodyLimit({
    maxSize: MAX_UPLOAD_BYTES + MAX_FORM_BYTES,
    onError: () => {
      throw new PageError(413, "That file is too large", "A members file may be up to 5 MiB; split it up.");
    },
  });
  app.on(["POST"], "*", (c, next) =>
    c.req.path === MEMBERS_BULK_PATH ? uploadLimit(c, next) : formLimit(c, next),
  );

  app.get(`${ASSETS_PATH}/:file`, (c) => {
    const asset = assetFor(c.req.param("file"));
    if (!asset) throw new PageError(404, "Page not found", "There is no such file.");
    return c.body(asset.body, 200, {
      "Content-Type": asset.type,
      "Cache-Control": "public, max-age=31536000, immutable",
    });
  });

  registerSignIn(app);
  registerSso(app);
  registerAcceptInvitation(app);
  registerHome(app);
  registerTokens(app);
  registerWebhooks(app);
  registerWebhookActions(app);
  registerExports(app);
  // Before the members' `/:id` pages: `bulk` is not a member.
  registerBulkUpload(app);
  registerMembers(app);
  registerLti(app);
  registerXapi(app);
  registerAnalytics(app);
  registerBilling(app);
  registerSettings(app);

  app.notFound((c) =>
    errorPage(
      c,
      404,
      "Page not found",
      "There is no such page in the dashboard. Check the address, or start from the overview.",
      {},
    ),
  );
  app.onError((err, c) => {
    if (err instanceof PageError) return errorPage(c, err.status, err.title, err.message, err.headers);
    const error = toApiError(err);
    if (error.status >= 500) {
      console.error(
        JSON.stringify({
          level: "error",
          request_id: c.get("requestId"),
          path: c.req.path,
          error: err instanceof Error ? err.stack : String(err),
        }),
      );
    }
    const title = error.status === 404 ? "Not found" : ERROR_CATALOGUE[error.code].title;
    return errorPage(c, error.status, title, error.message, error.headers);
  });
  return app;
}
