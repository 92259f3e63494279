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
import { ASSETS_PATH, DASHBOARD, SIGN_IN_PATH } from "./prefixes";
import { registerAcceptInvitation } from "./routes/accept-invitation";
import { registerAnalytics } from "./routes/analytics";
import { registerBilling } from "./routes/billing";
import { registerExports } from "./routes/exports";
import { registerHome } from "./routes/home";
import { registerSettings } from "./routes/settings";
import { registerSignIn } from "./routes/sign-in";
import { registerTokens } from "./routes/tokens";
import { registerWebhooks } from "./routes/webhooks";

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
  app.on(
    ["POST"],
    "*",
    bodyLimit({
      maxSize: MAX_FORM_BYTES,
      onError: () => {
        throw new PageError(413, "That form is too large", "Send less text, or split it up.");
      },
    }),
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
  registerAcceptInvitation(app);
  registerHome(app);
  registerTokens(app);
  registerWebhooks(app);
  registerExports(app);
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
