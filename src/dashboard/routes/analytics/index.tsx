import type { Context, Hono } from "hono";
import type { Child } from "hono/jsx";
import { todayIn } from "../../../domains/institutions/analytics/range";
import { readAnalytics } from "../../../domains/institutions/analytics/service";
import { getInstitution } from "../../../domains/institutions/service";
import type { AppEnv } from "../../../env";
import { enforce, holdsAbility } from "../../../platform/auth/policy";
import { ApiError } from "../../../platform/errors";
import { fieldMessages } from "../../forms";
import { html } from "../../http";
import { Layout } from "../../layout";
import { ANALYTICS_PATH, INSTITUTIONS_PATH } from "../../prefixes";
import { signedIn } from "../../session";
import { autoGranularity, formFrom, LABELS, RangePicker, resolveForm } from "./range";
import { ANALYTICS_THEME_PATH, cspWithLogo, themeCss, themeOf, themeUrl } from "./theme";
import { type Analytics, BrandBand, Charts, PrintPage } from "./views";

const SECTION = "analytics";

async function renderAnalytics(c: Context<AppEnv>) {
  const session = c.var.dashboard;
  enforce(holdsAbility(session.principal, "analytics:read"));
  const form = formFrom(c.req.query());
  const page = (children: Child, status = 200, theme?: { primary: string; accent: string }) =>
    html(
      c,
      <Layout
        title="Analytics"
        nonce={c.var.nonce}
        session={session}
        current={SECTION}
        stylesheets={theme ? [themeUrl(theme)] : []}
      >
        <div class="branded">{children}</div>
      </Layout>,
      status,
    );
  if (!session.institution)
    return page(
      <>
        <h1>Analytics</h1>
        <div class="card empty">
          <p>Analytics are an institution's: choose the institution whose figures you want to see.</p>
          <p>
            <a class="button" href={INSTITUTIONS_PATH}>
              Choose an institution
            </a>
          </p>
        </div>
      </>,
    );
  const { institution } = await getInstitution(session.ctx, session.institution.id);
  const theme = themeOf(institution.branding ?? {});
  const today = todayIn(institution.timeZone, session.ctx.now());
  const resolved = resolveForm(form, today);
  let data: Analytics | null = null;
  let errors: string[] = "errors" in resolved ? resolved.errors : [];
  if (!("errors" in resolved)) {
    try {
      const answer = await readAnalytics(session.ctx, {
        institutionId: institution.id,
        query: {
          from: resolved.from,
          to: resolved.to,
          granularity:
            form.granularity === "auto" ? autoGranularity(resolved.from, resolved.to) : form.granularity,
          ...(form.group ? { group: form.group } : {}),
        },
      });
      if (answer.status === 200) data = answer.body;
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== "validation_failed") throw error;
      errors = error.errors ? fieldMessages(error.errors, LABELS) : [error.message];
    }
  }
  c.header("Content-Security-Policy", cspWithLogo(c.var.nonce, institution.branding?.logo_url ?? null));
  if (data && form.print)
    return html(
      c,
      <PrintPage nonce={c.var.nonce} theme={theme} data={data} form={form} locale={institution.locale} />,
    );
  const groups = data ? data.groups.map((g) => g.name) : [];
  return page(
    <>
      {data ? (
        <BrandBand data={data} form={form} />
      ) : (
        <header class="brand-band">
          <h1>{`${institution.branding?.display_name ?? institution.name} · Analytics`}</h1>
        </header>
      )}
      <RangePicker
        form={form}
        groups={groups}
        errors={errors}
        range={"errors" in resolved ? null : resolved}
      />
      {data ? (
        <>
          {data.totals.active_learners === 0 ? (
            <p class="notice" role="status">
              No learner practised in this range. Figures appear as your learners practise; try a longer
              range, or invite learners under Members.
            </p>
          ) : null}
          <Charts data={data} locale={institution.locale} />
          <p class="hint">
            The same figures as <code>{`GET /api/institutions/${institution.id}/analytics`}</code> (ability{" "}
            <code>analytics:read</code>), current with every recording.
          </p>
        </>
      ) : null}
    </>,
    errors.length > 0 ? 422 : 200,
    theme,
  );
}

/**
 * Analytics: the white-label dashboard of `GET /api/institutions/{id}/analytics` (the same service,
 * the same ability), drawn as SVG charts in the institution's colours, with a range picker that is a
 * GET form and a print view.
 */
export function registerAnalytics(app: Hono<AppEnv>) {
  app.get(ANALYTICS_PATH, signedIn, renderAnalytics);

  // The theme's stylesheet: built from the two colours its URL names (anything but six hex digits
  // falls back to the dashboard's own), the same for everybody, so it needs no session and may be
  // cached for a year. The page's CSP allows styles from this origin only, never inline.
  app.get(ANALYTICS_THEME_PATH, (c) => {
    const hex = (value: string | undefined) => (value && /^[0-9a-fA-F]{6}$/.test(value) ? `#${value}` : null);
    const css = themeCss(
      themeOf({ primary_color: hex(c.req.query("primary")), accent_color: hex(c.req.query("accent")) }),
    );
    return c.body(css, 200, {
      "Content-Type": "text/css; charset=utf-8",
      "Cache-Control": "public, max-age=31536000, immutable",
    });
  });
}
