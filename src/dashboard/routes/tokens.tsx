import type { Context, Hono } from "hono";
import type { Child } from "hono/jsx";
import { presentToken } from "../../domains/tokens/present";
import { CreateTokenBody } from "../../domains/tokens/schemas";
import { createApiToken, listTokens, revokeToken } from "../../domains/tokens/service";
import type { AppEnv } from "../../env";
import { enforce, holdsAbility } from "../../platform/auth/policy";
import { ApiError } from "../../platform/errors";
import { sectionPage } from "../components";
import { field, fieldMessages, formOf, issuesOf, pageNumber } from "../forms";
import {
  CreatedToken,
  DEFAULT_EXPIRY,
  expiresAt,
  LABELS,
  NewTokenForm,
  type TokenForm,
} from "../pages/token-form";
import { PER_PAGE, SECTION, TokenList, type TokenRow } from "../pages/tokens";
import { TOKENS_PATH } from "../prefixes";
import { checkCsrf, signedIn } from "../session";

function page(c: Context<AppEnv>, title: string, children: Child, status = 200) {
  return sectionPage(c, { title, section: SECTION, status }, children);
}

const NOTICES: Record<string, string> = {
  revoked: "The token was revoked. Requests with it are now refused.",
};

/**
 * Settings → Integrations → API tokens: the tokens domain's list, create and revoke, with the
 * abilities the routes of `/api/integrations/tokens` require and the same service rules (what a
 * token may grant, the token limit, who manages which tokens).
 */
export function registerTokens(app: Hono<AppEnv>) {
  app.get(TOKENS_PATH, signedIn, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "tokens:read"));
    const pageNo = pageNumber(c.req.query("page"));
    const { total, dataJson } = await listTokens(session.ctx, {
      page: { page: pageNo, per_page: PER_PAGE },
      kind: "api",
    });
    const rows = JSON.parse(dataJson) as TokenRow[];
    const notice = NOTICES[c.req.query("notice") ?? ""];
    return page(
      c,
      "API tokens",
      <TokenList session={session} rows={rows} total={total} page={pageNo} notice={notice} />,
    );
  });

  app.get(`${TOKENS_PATH}/new`, signedIn, (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "tokens:write"));
    const form = { name: "", abilities: [], expiry: DEFAULT_EXPIRY, expiresOn: "" };
    return page(c, "Create an API token", <NewTokenForm session={session} form={form} errors={[]} />);
  });

  app.post(TOKENS_PATH, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "tokens:write"));
    const posted = await formOf(c);
    const form: TokenForm = {
      name: field(posted, "name"),
      abilities: posted.abilities ?? [],
      expiry: field(posted, "expiry") || DEFAULT_EXPIRY,
      expiresOn: field(posted, "expires_on"),
    };
    const refuse = (errors: string[], status: number) =>
      page(c, "Create an API token", <NewTokenForm session={session} form={form} errors={errors} />, status);
    const expiry = expiresAt(form, session.ctx.now());
    if ("error" in expiry) return refuse([expiry.error], 422);
    // The API's own request schema: the same name and ability rules as `POST /api/integrations/tokens`.
    const parsed = CreateTokenBody.safeParse({
      name: form.name,
      abilities: form.abilities,
      expires_at: expiry.value,
    });
    if (!parsed.success) return refuse(fieldMessages(issuesOf(parsed.error.issues), LABELS), 422);
    let created: Awaited<ReturnType<typeof createApiToken>>;
    try {
      created = await createApiToken(session.ctx, parsed.data);
    } catch (error) {
      if (error instanceof ApiError && error.status < 500) {
        const messages = error.errors ? fieldMessages(error.errors, LABELS) : [error.message];
        return refuse(messages, error.status);
      }
      throw error;
    }
    const { row, plain } = created;
    const token = presentToken(row);
    return page(
      c,
      "Token created",
      <CreatedToken token={token} plain={plain} origin={new URL(c.req.url).origin} />,
      201,
    );
  });

  app.post(`${TOKENS_PATH}/:token/revoke`, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "tokens:write"));
    // Another institution's, an unknown or an already revoked token: the service's 404.
    await revokeToken(session.ctx, c.req.param("token"));
    return c.redirect(`${TOKENS_PATH}?notice=revoked`, 303);
  });
}
