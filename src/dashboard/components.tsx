import type { Context } from "hono";
import type { Child } from "hono/jsx";
import type { AppEnv } from "../env";
import { PageError } from "./errors";
import { html } from "./http";
import { Layout } from "./layout";
import { Pager } from "./pager";
import type { DashboardSession } from "./session";

export { ActionForm, ConfirmForm, CopyField, FilterBar, Select } from "./form-controls";

/**
 * The pieces every section's pages are built from, so that a list, an empty state, a notice, a
 * confirmation, a copyable value and a progress bar look and behave the same everywhere (see
 * docs/design/dashboard.md). Sections add views of their own in `pages/`, not variants of these.
 */

/** A section's page: the layout with the section marked, its breadcrumb line, and `children`. */
export function sectionPage(
  c: Context<AppEnv>,
  options: { title: string; section: string; crumbs?: string; status?: number },
  children: Child,
) {
  return html(
    c,
    <Layout title={options.title} nonce={c.var.nonce} session={c.var.dashboard} current={options.section}>
      {options.crumbs ? <p class="crumbs">{options.crumbs}</p> : null}
      {children}
    </Layout>,
    options.status ?? 200,
  );
}

/** A confirmation that something happened (after a redirect's `?notice=`); nothing when absent. */
export function Notice({ text }: { text?: string }) {
  return text ? (
    <p class="notice" role="status">
      {text}
    </p>
  ) : null;
}

/** An empty list: what is (not) there, and what to do next. */
export function EmptyState({ title, children }: { title?: string; children?: Child }) {
  return (
    <div class="card empty">
      {title ? <h2>{title}</h2> : null}
      {children}
    </div>
  );
}

/**
 * A paginated list: an empty state when there is nothing at all, another when the page is past the
 * end (with the way back), else the table (`head` and `rows`) in a scrollable, labelled region with
 * its pager (the pager keeps `query`, the list's filters).
 */
export function ListTable({
  label,
  caption,
  head,
  rows,
  count,
  total,
  empty,
  path,
  query = {},
  page,
  perPage,
}: {
  label: string;
  caption?: string;
  head: Child;
  rows: Child;
  /** Rows on this page. */
  count: number;
  total: number;
  empty: Child;
  path: string;
  query?: Record<string, string>;
  page: number;
  perPage: number;
}) {
  if (total === 0) return <>{empty}</>;
  if (count === 0) {
    const first = `${path}?${new URLSearchParams({ ...query, page: "1" }).toString()}`;
    return (
      <EmptyState>
        <p>
          There is nothing on page {page}. <a href={first}>Go to the first page</a>.
        </p>
      </EmptyState>
    );
  }
  return (
    <section class="table-wrap" aria-label={label} tabindex={0}>
      <table>
        <caption>{caption ?? `${label} (${total})`}</caption>
        <thead>
          <tr>{head}</tr>
        </thead>
        <tbody>{rows}</tbody>
      </table>
      <Pager path={path} query={query} page={page} perPage={perPage} total={total} />
    </section>
  );
}

/** A column heading; `hidden` names a column (of actions) for screen readers only. */
export function Col({ children, hidden }: { children: Child; hidden?: boolean }) {
  return <th scope="col">{hidden ? <span class="visually-hidden">{children}</span> : children}</th>;
}

/**
 * A long operation's progress: a native `<progress>` (no inline style) with its text beside it.
 * `field` names the elements the script updates while it polls (`data-field="<field>-bar"` and
 * `"<field>-text"`).
 */
export function ProgressBar({
  label,
  done,
  total,
  text,
  field = "progress",
}: {
  label: string;
  done: number;
  total: number;
  text: string;
  field?: string;
}) {
  return (
    <div class="progress">
      <progress
        max={Math.max(1, total)}
        value={Math.min(done, Math.max(1, total))}
        aria-label={label}
        data-field={`${field}-bar`}
      >
        {text}
      </progress>
      <span data-field={`${field}-text`}>{text}</span>
    </div>
  );
}

/** A status word as a badge; `warn` marks the ones that need attention. */
export function StatusBadge({ text, warn, field }: { text: string; warn?: boolean; field?: string }) {
  return (
    <span class={warn ? "badge warn" : "badge"} data-field={field}>
      {text}
    </span>
  );
}

/**
 * The institution a section of institution data acts on: an admin's own, or the one platform staff
 * chose. Staff who have not chosen yet are sent to choose (the picker is in the navigation).
 */
export function institutionOf(session: DashboardSession): { id: string; name: string } {
  if (session.institution) return session.institution;
  throw new PageError(
    409,
    "Choose an institution first",
    "This section shows one institution's data. Choose the institution under Institutions in the navigation, then come back.",
  );
}
