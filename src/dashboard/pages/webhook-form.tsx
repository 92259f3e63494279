import type { WebhookRow } from "../../domains/webhooks/service";
import { EVENT_TYPES, SUBSCRIBABLE_TYPES } from "../../platform/events";
import { field } from "../forms";

/** A webhook's form (new and edit): its fields, and reading them from a post. */

export const LABELS = {
  url: "URL",
  events: "Events",
  description: "Description",
  enabled: "Enabled",
  since: "Since",
};

export interface HookForm {
  url: string;
  description: string;
  events: string[];
  enabled: boolean;
}

export function HookFields({ form }: { form: HookForm }) {
  return (
    <>
      <label for="url">{LABELS.url}</label>
      <p class="hint" id="url-hint">
        Where we POST each event: a public <code>https</code> URL.
      </p>
      <input
        id="url"
        name="url"
        type="text"
        inputmode="url"
        required
        value={form.url}
        aria-describedby="url-hint"
      />
      <label for="description">{LABELS.description}</label>
      <input id="description" name="description" type="text" maxlength={500} value={form.description} />
      <fieldset>
        <legend>{LABELS.events}</legend>
        <label class="check">
          <input type="checkbox" name="events" value="*" checked={form.events.includes("*")} />
          <span>
            Every event (<code>*</code>)<small>Also event types added later.</small>
          </span>
        </label>
        <div class="checks">
          {SUBSCRIBABLE_TYPES.map((type) => (
            <label class="check">
              <input type="checkbox" name="events" value={type} checked={form.events.includes(type)} />
              <span>
                <code>{type}</code>
                <small>{EVENT_TYPES[type]}</small>
              </span>
            </label>
          ))}
        </div>
      </fieldset>
      <label class="check">
        <input type="checkbox" name="enabled" value="true" checked={form.enabled} />
        <span>Enabled: send events to this URL</span>
      </label>
    </>
  );
}

export function hookForm(posted: Record<string, string[]>): HookForm {
  return {
    url: field(posted, "url").trim(),
    description: field(posted, "description"),
    events: posted.events ?? [],
    enabled: field(posted, "enabled") === "true",
  };
}

export function formOfHook(hook: WebhookRow): HookForm {
  return { url: hook.url, description: hook.description ?? "", events: hook.events, enabled: hook.enabled };
}
