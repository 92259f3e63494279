import type { Child } from "hono/jsx";
import { CSS_URL, JS_URL } from "./assets";
import { choosesInstitution } from "./policy";
import { DASHBOARD, INSTITUTIONS_PATH, SIGN_OUT_PATH } from "./prefixes";
import { SECTIONS } from "./sections";
import type { DashboardSession } from "./session";
import { CSRF_FIELD } from "./session";

interface LayoutProps {
  title: string;
  nonce: string;
  /** The signed-in browser; absent on the sign-in and invitation pages. */
  session?: DashboardSession;
  /** The section this page belongs to (marked in the navigation). */
  current?: string;
  /** More stylesheets of this origin after the dashboard's own (analytics: the institution's theme). */
  stylesheets?: readonly string[];
  children?: Child;
}

/** The hidden field every state-changing form of a signed-in page carries. */
export function CsrfField({ token }: { token: string }) {
  return <input type="hidden" name={CSRF_FIELD} value={token} />;
}

function Navigation({ current, session }: { current?: string; session: DashboardSession }) {
  const groups = [...new Set(SECTIONS.map((s) => s.group))];
  return (
    <nav class="sections" aria-label="Dashboard sections">
      <ul>
        <li>
          <a href={DASHBOARD} aria-current={current === "home" ? "page" : undefined}>
            Overview
          </a>
        </li>
        {choosesInstitution(session.principal) ? (
          <li>
            <a href={INSTITUTIONS_PATH} aria-current={current === "institutions" ? "page" : undefined}>
              Institutions
            </a>
          </li>
        ) : null}
      </ul>
      {groups.map((group) => (
        <>
          <h2>{group}</h2>
          <ul>
            {SECTIONS.filter((s) => s.group === group).map((s) => (
              <li>
                <a href={s.path} aria-current={current === s.id ? "page" : undefined}>
                  {s.label}
                </a>
              </li>
            ))}
          </ul>
        </>
      ))}
    </nav>
  );
}

/**
 * Every page: the stylesheet, the one script (with the page's nonce), a skip link, the top bar
 * (who is signed in, which institution, sign out) and the navigation of the sections that exist.
 */
export function Layout({ title, nonce, session, current, stylesheets, children }: LayoutProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>{`${title} · Lingua dashboard`}</title>
        {/* No favicon request (it would be a 404): an empty icon, allowed by img-src data:. */}
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href={CSS_URL} />
        {(stylesheets ?? []).map((href) => (
          <link rel="stylesheet" href={href} />
        ))}
        <script src={JS_URL} nonce={nonce} defer />
      </head>
      <body>
        <a class="skip" href="#content">
          Skip to content
        </a>
        <header class="topbar">
          <a class="brand" href={DASHBOARD}>
            Lingua dashboard
          </a>
          {session ? (
            <div class="who">
              <span>
                {session.institution ? (
                  <>
                    <span class="visually-hidden">Institution: </span>
                    {session.institution.name}
                    {" · "}
                  </>
                ) : null}
                <span class="visually-hidden">Signed in as </span>
                {session.principal.user.email}
              </span>
              <form method="post" action={SIGN_OUT_PATH}>
                <CsrfField token={session.csrf} />
                <button type="submit">Sign out</button>
              </form>
            </div>
          ) : null}
        </header>
        <div id="live-status" class="visually-hidden" aria-live="polite" />
        {session ? (
          <div class="shell">
            <Navigation current={current} session={session} />
            <main id="content" tabindex={-1}>
              {children}
            </main>
          </div>
        ) : (
          <main id="content" class="narrow card" tabindex={-1}>
            {children}
          </main>
        )}
      </body>
    </html>
  );
}

/** A form's errors, listed first and focused when the page loads (the script moves focus there). */
export function ErrorSummary({ errors }: { errors: readonly string[] }) {
  if (errors.length === 0) return null;
  return (
    <div class="error-summary" role="alert" tabindex={-1} data-focus-on-load="">
      <h2>There is a problem</h2>
      <ul>
        {errors.map((e) => (
          <li>{e}</li>
        ))}
      </ul>
    </div>
  );
}

/** `2026-11-21T09:30:00Z` → `2026-11-21 09:30 UTC`, in a `<time>` element. */
export function When({ iso, never = "—" }: { iso: string | null; never?: string }) {
  if (!iso) return <>{never}</>;
  return <time datetime={iso}>{`${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`}</time>;
}

/** Names as code badges (abilities, event types); a `*` among them is one badge that says what it means. */
export function CodeBadges({ names, everything }: { names: readonly string[]; everything: string }) {
  if (names.includes("*")) return <span class="badge">{`${everything} (*)`}</span>;
  return (
    <>
      {names.map((name) => (
        <span class="badge">
          <code>{name}</code>
        </span>
      ))}
    </>
  );
}
