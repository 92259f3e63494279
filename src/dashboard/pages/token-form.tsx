import { ABILITIES, type Ability, WILDCARD } from "../../platform/auth/abilities";
import { DAY_MS, dayProblem } from "../../platform/dates";
import { nowIso } from "../../platform/ids";
import { CopyField } from "../components";
import { CsrfField, ErrorSummary, When } from "../layout";
import { TOKENS_PATH } from "../prefixes";
import type { DashboardSession } from "../session";
import { AbilityBadges, Crumbs, type TokenRow } from "./tokens";

/** A new API token's form, reading it, and the page that shows the created token once. */

export const LABELS = {
  name: "Name",
  abilities: "Abilities",
  expires_at: "Expiry",
  expires_on: "Expiry date",
};

/** The expiry choices of the form (GitHub's, and "no expiry" last); the default is 90 days. */
export const EXPIRY_CHOICES = [
  { value: "7", label: "7 days" },
  { value: "30", label: "30 days" },
  { value: "90", label: "90 days" },
  { value: "365", label: "1 year" },
  { value: "custom", label: "Custom date…" },
  { value: "never", label: "No expiry" },
] as const;
export const DEFAULT_EXPIRY = "90";

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

export interface TokenForm {
  name: string;
  abilities: string[];
  expiry: string;
  expiresOn: string;
}

export function NewTokenForm({
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

export function CreatedToken({ token, plain, origin }: { token: TokenRow; plain: string; origin: string }) {
  return (
    <>
      <Crumbs />
      <h1>Token created</h1>
      <p class="notice" role="status">
        Copy the token “{token.name}” now and store it safely: it is shown only this once.
      </p>
      <div class="card">
        <CopyField id="new-token" label="Your new token" value={plain} />
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
export function expiresAt(form: TokenForm, now: number): { value: string | null } | { error: string } {
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
