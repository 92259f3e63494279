import type { Context, Hono } from "hono";
import type { Child } from "hono/jsx";
import { readCompliance } from "../../../domains/institutions/compliance/service";
import { UpdateInstitutionBody } from "../../../domains/institutions/schemas";
import { getInstitution, updateInstitution } from "../../../domains/institutions/service";
import { readSso } from "../../../domains/institutions/sso/service";
import type { AppEnv } from "../../../env";
import { enforce, holdsAbility } from "../../../platform/auth/policy";
import { field, formOf, issuesOf } from "../../forms";
import { CsrfField, ErrorSummary } from "../../layout";
import { AA_GRAPHICS, AA_TEXT, contrast, isHexColour } from "../../pages/colours";
import { ANALYTICS_PATH, INSTITUTION_SETTINGS_PATH } from "../../prefixes";
import { checkCsrf, signedIn } from "../../session";
import { LABELS, messages, NOTICES, needInstitution, page, refusalMessages } from "./common";
import { ComplianceCard } from "./compliance";
import { SsoSummary } from "./sso-summary";

/** The settings page itself: name, branding, locale and time zone, with the SSO and compliance cards. */
/** Warnings about a branding's colours (WCAG 2.x AA), before or after saving. */
export function contrastWarnings(primary: string, accent: string): string[] {
  const out: string[] = [];
  if (isHexColour(primary)) {
    const ratio = contrast(primary, "#ffffff");
    if (ratio < AA_TEXT)
      out.push(
        `Primary colour ${primary}: white text on it has a contrast of ${ratio.toFixed(1)}:1, below the 4.5:1 that WCAG AA asks of text. The dashboard darkens it for links, buttons and chart lines; your own apps may not.`,
      );
  }
  if (isHexColour(accent)) {
    const ratio = contrast(accent, "#ffffff");
    if (ratio < AA_GRAPHICS)
      out.push(
        `Accent colour ${accent}: on white it has a contrast of ${ratio.toFixed(1)}:1, below the 3:1 that WCAG AA asks of graphics such as chart bars.`,
      );
  }
  return out;
}

/** A colour's sample, drawn as SVG (the CSP allows no inline style). */
function Swatch({ colour }: { colour: string }) {
  if (!isHexColour(colour)) return null;
  return (
    <svg class="swatch-svg" width="20" height="20" viewBox="0 0 20 20" aria-hidden="true">
      <rect x="0.5" y="0.5" width="19" height="19" rx="3" fill={colour} stroke="#8a93a6" />
    </svg>
  );
}

/** A branding colour's field (`#rrggbb`, described by the hint `#colour-hint`) with its sample. */
function ColourField({
  name,
  value,
  disabled,
  children,
}: {
  name: "primary_color" | "accent_color";
  value: string;
  disabled: boolean;
  children?: Child;
}) {
  return (
    <>
      <label for={name}>{LABELS[`branding.${name}`]}</label>
      {children}
      <div class="secret">
        <input
          id={name}
          name={name}
          type="text"
          maxlength={7}
          pattern="#[0-9a-fA-F]{6}"
          value={value}
          aria-describedby="colour-hint"
          disabled={disabled}
        />
        <Swatch colour={value} />
      </div>
    </>
  );
}

export interface GeneralForm {
  name: string;
  locale: string;
  timeZone: string;
  displayName: string;
  logoUrl: string;
  primary: string;
  accent: string;
}

export async function renderSettings(
  c: Context<AppEnv>,
  options: { form?: GeneralForm; errors?: string[]; status?: number; ssoErrors?: string[] } = {},
) {
  const session = c.var.dashboard;
  enforce(holdsAbility(session.principal, "institutions:read"));
  if (!session.institution) return needInstitution(c);
  const ctx = session.ctx;
  const { institution } = await getInstitution(ctx, session.institution.id);
  const origin = new URL(c.req.url).origin;
  const [sso, compliance] = await Promise.all([
    holdsAbility(session.principal, "sso:read").allowed
      ? readSso(ctx, { institutionId: institution.id, origin })
      : null,
    holdsAbility(session.principal, "compliance:read").allowed ? readCompliance(ctx, institution.id) : null,
  ]);
  const b = institution.branding ?? {};
  const form: GeneralForm = options.form ?? {
    name: institution.name,
    locale: institution.locale,
    timeZone: institution.timeZone,
    displayName: b.display_name ?? "",
    logoUrl: b.logo_url ?? "",
    primary: b.primary_color ?? "",
    accent: b.accent_color ?? "",
  };
  const mayWrite = holdsAbility(session.principal, "members:write").allowed;
  const warnings = contrastWarnings(form.primary, form.accent);
  const notice = NOTICES[c.req.query("notice") ?? ""];
  return page(
    c,
    "Institution settings",
    <>
      <h1>Institution settings</h1>
      {notice ? (
        <p class="notice" role="status">
          {notice}
        </p>
      ) : null}
      <ErrorSummary errors={[...(options.errors ?? []), ...(options.ssoErrors ?? [])]} />
      <section class="card" aria-labelledby="general-heading">
        <h2 id="general-heading">Name, branding, locale and time zone</h2>
        <form method="post" action={INSTITUTION_SETTINGS_PATH}>
          <CsrfField token={session.csrf} />
          <label for="name">{LABELS.name}</label>
          <input
            id="name"
            name="name"
            type="text"
            maxlength={200}
            required
            value={form.name}
            disabled={!mayWrite}
          />
          <fieldset>
            <legend>Branding</legend>
            <p class="hint">
              Used by <a href={ANALYTICS_PATH}>Analytics</a> and your white-label apps. Leave a field empty to
              clear it.
            </p>
            <label for="display_name">{LABELS["branding.display_name"]}</label>
            <input
              id="display_name"
              name="display_name"
              type="text"
              maxlength={100}
              value={form.displayName}
              disabled={!mayWrite}
            />
            <label for="logo_url">{LABELS["branding.logo_url"]}</label>
            <p class="hint" id="logo-hint">
              An https address of an image (SVG or PNG), shown about 48 pixels high.
            </p>
            <input
              id="logo_url"
              name="logo_url"
              type="url"
              maxlength={2048}
              value={form.logoUrl}
              aria-describedby="logo-hint"
              disabled={!mayWrite}
            />
            <ColourField name="primary_color" value={form.primary} disabled={!mayWrite}>
              <p class="hint" id="colour-hint">
                As <code>#rrggbb</code>, e.g. <code>#1a73e8</code>.
              </p>
            </ColourField>
            <ColourField name="accent_color" value={form.accent} disabled={!mayWrite} />
            {warnings.length > 0 ? (
              <ul class="contrast-warnings" aria-label="Contrast warnings">
                {warnings.map((w) => (
                  <li class="warn-text">{w}</li>
                ))}
              </ul>
            ) : null}
          </fieldset>
          <label for="locale">{LABELS.locale}</label>
          <p class="hint" id="locale-hint">
            A language tag such as <code>en-GB</code> or <code>es</code>: how numbers and dates are written.
          </p>
          <input
            id="locale"
            name="locale"
            type="text"
            maxlength={35}
            required
            value={form.locale}
            aria-describedby="locale-hint"
            disabled={!mayWrite}
          />
          <label for="time_zone">{LABELS.time_zone}</label>
          <p class="hint" id="tz-hint">
            An IANA time zone such as <code>Europe/London</code>: where “today” ends for analytics' default
            range.
          </p>
          <input
            id="time_zone"
            name="time_zone"
            type="text"
            maxlength={64}
            required
            value={form.timeZone}
            aria-describedby="tz-hint"
            disabled={!mayWrite}
          />
          {mayWrite ? (
            <div class="actions">
              <button type="submit">Save settings</button>
            </div>
          ) : (
            <p class="hint">Only the institution's administrators change these settings.</p>
          )}
        </form>
      </section>
      {sso ? <SsoSummary sso={sso} session={session} /> : null}
      {compliance ? <ComplianceCard compliance={compliance} /> : null}
    </>,
    options.status ?? 200,
  );
}

/** Name, branding, locale and time zone: `PATCH /api/institutions/{id}`'s service and rules. */
export function registerGeneralSettings(app: Hono<AppEnv>) {
  app.get(INSTITUTION_SETTINGS_PATH, signedIn, (c) => renderSettings(c));

  app.post(INSTITUTION_SETTINGS_PATH, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "members:write"));
    if (!session.institution) return needInstitution(c);
    const posted = await formOf(c);
    const form: GeneralForm = {
      name: field(posted, "name").trim(),
      locale: field(posted, "locale").trim(),
      timeZone: field(posted, "time_zone").trim(),
      displayName: field(posted, "display_name").trim(),
      logoUrl: field(posted, "logo_url").trim(),
      primary: field(posted, "primary_color").trim(),
      accent: field(posted, "accent_color").trim(),
    };
    const parsed = UpdateInstitutionBody.safeParse({
      name: form.name,
      locale: form.locale,
      time_zone: form.timeZone,
      branding: {
        display_name: form.displayName || null,
        logo_url: form.logoUrl || null,
        primary_color: form.primary || null,
        accent_color: form.accent || null,
      },
    });
    if (!parsed.success)
      return renderSettings(c, { form, errors: messages(issuesOf(parsed.error.issues)), status: 422 });
    try {
      await updateInstitution(session.ctx, { id: session.institution.id, input: parsed.data });
    } catch (error) {
      return renderSettings(c, { form, ...refusalMessages(error) });
    }
    return c.redirect(`${INSTITUTION_SETTINGS_PATH}?notice=saved`, 303);
  });
}
