import type { Child } from "hono/jsx";
import { CsrfField } from "./layout";

/**
 * The form pieces of the dashboard's pages (./components.tsx has the rest): filters, a select, a
 * confirmation, a one-button action, a copyable value — the same everywhere (docs/design/dashboard.md).
 */

/**
 * A list's filters: a GET form (readable without JavaScript, bookmarkable) with `children` as its
 * fields, a Filter button and, when any filter is set, a link back to the whole list.
 */
export function FilterBar({
  path,
  label,
  active,
  children,
}: {
  path: string;
  label: string;
  active: boolean;
  children: Child;
}) {
  return (
    <form method="get" action={path} class="filters" aria-label={label}>
      {children}
      <div class="actions">
        <button type="submit" class="secondary">
          Filter
        </button>
        {active ? <a href={path}>Clear filters</a> : null}
      </div>
    </form>
  );
}

/** A labelled `<select>` of a filter bar or a form; `""` is the "any" choice when `any` is given. */
export function Select({
  id,
  name,
  label,
  options,
  value,
  any,
}: {
  id: string;
  name?: string;
  label: string;
  options: readonly { value: string; label: string }[];
  value: string;
  any?: string;
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} name={name ?? id}>
        {any !== undefined ? (
          <option value="" selected={value === ""}>
            {any}
          </option>
        ) : null}
        {options.map((o) => (
          <option value={o.value} selected={value === o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
}

/**
 * A destructive or irreversible action behind a disclosure: the person opens it, reads what will
 * happen, and only then finds the button. Works without JavaScript.
 */
export function ConfirmForm({
  action,
  csrf,
  summary,
  text,
  button,
  children,
}: {
  action: string;
  csrf: string;
  summary: string;
  text: Child;
  button: string;
  children?: Child;
}) {
  return (
    <details class="confirm">
      <summary>{summary}</summary>
      <form method="post" action={action}>
        <CsrfField token={csrf} />
        {children}
        <p>{text}</p>
        <button type="submit" class="danger">
          {button}
        </button>
      </form>
    </details>
  );
}

/** A one-button form (no confirmation: for actions that are safe to repeat). */
export function ActionForm({
  action,
  csrf,
  button,
  label,
  secondary,
  children,
}: {
  action: string;
  csrf: string;
  button: string;
  /** The button's accessible name when its text alone is ambiguous in a list. */
  label?: string;
  secondary?: boolean;
  children?: Child;
}) {
  return (
    <form method="post" action={action} class="inline">
      <CsrfField token={csrf} />
      {children}
      <button type="submit" class={secondary ? "secondary" : undefined} aria-label={label}>
        {button}
      </button>
    </form>
  );
}

/**
 * A value to copy into another system (a secret shown once, an LMS setting): a read-only field the
 * person can select, and a Copy button the script reveals when the clipboard can be written.
 */
export function CopyField({
  id,
  label,
  value,
  hint,
}: {
  id: string;
  label: string;
  value: string;
  hint?: Child;
}) {
  return (
    <div class="copy-field">
      <label for={id}>{label}</label>
      {hint ? (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
      <div class="secret">
        <input
          id={id}
          type="text"
          readonly
          value={value}
          autocomplete="off"
          spellcheck={false}
          aria-describedby={hint ? `${id}-hint` : undefined}
        />
        <button type="button" class="secondary" data-copy={id} hidden>
          Copy<span class="visually-hidden"> {label}</span>
        </button>
      </div>
    </div>
  );
}
