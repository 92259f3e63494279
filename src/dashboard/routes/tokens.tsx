import type { Context, Hono } from "hono";
import type { Child } from "hono/jsx";
import type { z } from "zod";
import { presentToken } from "../../domains/tokens/present";
import { CreateTokenBody, type TokenSchema } from "../../domains/tokens/schemas";
import { createApiToken, listTokens, revokeToken } from "../../domains/tokens/service";
import type { AppEnv } from "../../env";
import { ABILITIES, type Ability, WILDCARD } from "../../platform/auth/abilities";
import { enforce, holdsAbility } from "../../platform/auth/policy";
import { DAY_MS, dayProblem } from "../../platform/dates";
import { ApiError } from "../../platform/errors";
import { nowIso } from "../../platform/ids";
import { field, fieldMessages, formOf, issuesOf, pageNumber } from "../forms";
import { html } from "../http";
import { CodeBadges, CsrfField, ErrorSummary, Layout, When } from "../layout";
import { Pager } from "../pager";
import { TOKENS_PATH } from "../prefixes";
import { checkCsrf, type DashboardSession, signedIn } from "../session";

type TokenRow = z.infer<typeof TokenSchema>;

const PER_PAGE = 25;
const SECTION = "tokens";
const CRUMBS = "Settings → Integrations";
const LABELS = { name: "Name", abilities: "Abilities", expires_at: "Expiry", expires_on: "Expiry date" };

/** The expiry choices of the form (GitHub's, and "no expiry" last); the default is 90 days. */
const EXPIRY_CHOICES = [
  { value: "7", label: "7 days" },
  { value: "30", label: "30 days" },
  { value: "90", label: "90 days" },
  { value: "365", label: "1 year" },
  { value: "custom", label: "Custom date…" },
  { value: "never", label: "No expiry" },
] as const;
const DEFAULT_EXPIRY = "90";

/** `content:read` → its area, `content`: the form groups abilities by area. */
function areaOf(ability: string): string {
  return ability.split(":")[0] ?? ability;
}

const AREA_LABELS: Record<string, string> = {
  tokens: "API tokens",
  content: "Content",
  progress: "Progress",
  stats: "Statistics",
  webhooks: "Webhooks",
  events: "Events",
  exports: "Exports",
  lti: "LTI",
  xapi: "xAPI",
  institutions: "Institutions",
  members: "Members",
  analytics: "Analytics",
  sso: "Single sign-on",
  compliance: "Compliance",
  billing: "Billing",
};

function Crumbs() {
  return <p class="crumbs">{CRUMBS}</p>;
}

function AbilityBadges({ abilities }: { abilities: readonly string[] }) {
  return <CodeBadges names={abilities} everything="Everything your role allows" />;
}

function TokenList({
  session,
  rows,
  total,
  page,
  notice,
}: {
  session: DashboardSession;
  rows: TokenRow[];
  total: number;
  page: number;
  notice?: string;
}) {
  const now = nowIso(session.ctx.now());
  return (
    <>
      <Crumbs />
      <h1>API tokens</h1>
      {notice ? (
        <p class="notice" role="status">
          {notice}
        </p>
      ) : null}
      <p>
        Tokens let your systems call the Lingua API as <code>Authorization: Bearer lng_…</code>.
        {session.principal.institution
          ? " You see every API token of your institution."
          : " Platform staff tokens belong to you, not to an institution."}
      </p>
      <div class="actions">
        <a class="button" href={`${TOKENS_PATH}/new`}>
          Create token
        </a>
      </div>
      {total === 0 ? (
        <div class="card empty">
          <h2>No API tokens yet</h2>
          <p>Create a token for each system that calls the API, with only the abilities it needs.</p>
        </div>
      ) : rows.length === 0 ? (
        <div class="card empty">
          <p>
            There is nothing on page {page}. <a href={TOKENS_PATH}>Go to the first page</a>.
          </p>
        </div>
      ) : (
        <section class="table-wrap" aria-label="API tokens" tabindex={0}>
          <table>
            <caption>Active API tokens ({total})</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Abilities</th>
                <th scope="col">Token</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Expires</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((t) => (
                <tr>
                  <th scope="row">
                    {t.name}
                    {t.user_id !== session.principal.user.id ? (
                      <span class="hint">
                        {" "}
                        (created by <code>{t.user_id}</code>)
                      </span>
                    ) : null}
                  </th>
                  <td>
                    <AbilityBadges abilities={t.abilities} />
                  </td>
                  <td>
                    <code>{t.prefix}…</code>
                  </td>
                  <td>
                    <When iso={t.created_at} />
                  </td>
                  <td>
                    <When iso={t.last_used_at} never="Never" />
                  </td>
                  <td>
                    <When iso={t.expires_at} never="Never" />
                    {t.expires_at && t.expires_at <= now ? <span class="badge warn">Expired</span> : null}
                  </td>
                  <td>
                    <details class="confirm">
                      <summary>Revoke…</summary>
                      <form method="post" action={`${TOKENS_PATH}/${encodeURIComponent(t.id)}/revoke`}>
                        <CsrfField token={session.csrf} />
                        <p>Revoke “{t.name}”? Requests with it are refused at once. This cannot be undone.</p>
                        <button type="submit" class="danger">
                          Revoke token
                        </button>
                      </form>
                    </details>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager path={TOKENS_PATH} query={{}} page={page} perPage={PER_PAGE} total={total} />
        </section>
      )}
    </>
  );
}

interface TokenForm {
  name: string;
  abilities: string[];
  expiry: string;
  expiresOn: string;
}

function NewTokenForm({
  session,
  form,
  errors,
}: {
  session: DashboardSession;
  form: TokenForm;
  errors: string[];
}) {
  // What this browser's session may grant: its own abilities (the role's ceiling for a session).
  const grantable = session.principal.token.abilities;
  const areas = [...new Set(grantable.map(areaOf))];
  return (
    <>
      <Crumbs />
      <h1>Create an API token</h1>
      <ErrorSummary errors={errors} />
      <form method="post" action={TOKENS_PATH}>
        <CsrfField token={session.csrf} />
        <label for="name">{LABELS.name}</label>
        <p class="hint" id="name-hint">
          What the token is for, e.g. “HR sync”. Up to 100 characters.
        </p>
        <input
          id="name"
          name="name"
          type="text"
          required
          maxlength={100}
          value={form.name}
          aria-describedby="name-hint"
        />
        <fieldset>
          <legend>{LABELS.abilities}</legend>
          <p class="hint">
            Give the token only what its system needs. You can grant only what your role allows.
          </p>
          <label class="check">
            <input
              type="checkbox"
              name="abilities"
              value={WILDCARD}
              checked={form.abilities.includes(WILDCARD)}
            />
            <span>
              Everything your role allows (<code>*</code>)<small>Also what your role is allowed later.</small>
            </span>
          </label>
          {areas.map((area) => (
            <fieldset>
              <legend>{AREA_LABELS[area] ?? area}</legend>
              <div class="checks">
                {grantable
                  .filter((a) => areaOf(a) === area)
                  .map((a) => (
                    <label class="check">
                      <input
                        type="checkbox"
                        name="abilities"
                        value={a}
                        checked={form.abilities.includes(a)}
                      />
                      <span>
                        <code>{a}</code>
                        <small>{ABILITIES[a as Ability]}</small>
                      </span>
                    </label>
                  ))}
              </div>
            </fieldset>
          ))}
        </fieldset>
        <label for="expiry">{LABELS.expires_at}</label>
        <select id="expiry" name="expiry" data-toggles="custom-expiry" data-toggle-value="custom">
          {EXPIRY_CHOICES.map((choice) => (
            <option value={choice.value} selected={form.expiry === choice.value}>
              {choice.label}
            </option>
          ))}
        </select>
        <div id="custom-expiry">
          <label for="expires_on">{LABELS.expires_on}</label>
          <p class="hint" id="expires-on-hint">
            With “Custom date…”: the token stops working at the end of this day (UTC).
          </p>
          <input
            id="expires_on"
            name="expires_on"
            type="date"
            value={form.expiresOn}
            aria-describedby="expires-on-hint"
          />
        </div>
        <div class="actions">
          <button type="submit">Create token</button>
          <a class="button secondary" href={TOKENS_PATH}>
            Cancel
          </a>
        </div>
      </form>
    </>
  );
}

function CreatedToken({ token, plain, origin }: { token: TokenRow; plain: string; origin: string }) {
  return (
    <>
      <Crumbs />
      <h1>Token created</h1>
      <p class="notice" role="status">
        Copy the token “{token.name}” now and store it safely: it is shown only this once.
      </p>
      <div class="card">
        <label for="new-token">Your new token</label>
        <div class="secret">
          <input id="new-token" type="text" readonly value={plain} autocomplete="off" spellcheck={false} />
          <button type="button" class="secondary" data-copy="new-token" hidden>
            Copy
          </button>
        </div>
        <p class="hint">Try it:</p>
        <pre>
          <code>{`curl ${origin}/api/auth/me \\\n  -H "Authorization: Bearer ${plain}"`}</code>
        </pre>
        <p>
          Abilities: <AbilityBadges abilities={token.abilities} />
        </p>
        <p>
          Expires: <When iso={token.expires_at} never="Never" />
        </p>
      </div>
      <div class="actions">
        <a class="button" href={TOKENS_PATH}>
          Back to API tokens
        </a>
      </div>
    </>
  );
}

/** The form's expiry as the API's `expires_at`, or a message naming what is wrong. */
function expiresAt(form: TokenForm, now: number): { value: string | null } | { error: string } {
  if (form.expiry === "never") return { value: null };
  if (form.expiry === "custom") {
    const problem = dayProblem(form.expiresOn);
    if (problem) return { error: `${LABELS.expires_on}: ${problem}` };
    return { value: `${form.expiresOn}T23:59:59Z` };
  }
  const days = Number(form.expiry);
  if (!EXPIRY_CHOICES.some((c) => c.value === form.expiry) || !Number.isSafeInteger(days))
    return { error: `${LABELS.expires_at}: choose one of the options` };
  return { value: nowIso(now + days * DAY_MS) };
}

function page(c: Context<AppEnv>, title: string, children: Child, status = 200) {
  return html(
    c,
    <Layout title={title} nonce={c.var.nonce} session={c.var.dashboard} current={SECTION}>
      {children}
    </Layout>,
    status,
  );
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
