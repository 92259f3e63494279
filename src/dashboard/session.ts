import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { getInstitution } from "../domains/institutions/service";
import type { AppEnv } from "../env";
import { admitToken } from "../platform/auth/middleware";
import { enforce } from "../platform/auth/policy";
import type { Principal } from "../platform/auth/principal";
import { ApiError } from "../platform/errors";
import { type PrincipalContext, useDatabase } from "../platform/service/context";
import { FIRST_DATABASE } from "../platform/service/databases";
import { useInstitutionDatabase } from "../platform/service/directory";
import { PageError } from "./errors";
import { field, formOf } from "./forms";
import {
  chosenInstitutionCookie,
  clearSessionCookies,
  crossOrigin,
  loginCsrfCookie,
  sameSecret,
  sessionCookie,
  sessionCsrfToken,
} from "./http";
import { choosesInstitution, mayUseDashboard } from "./policy";
import { ANALYTICS_PATH, INSTITUTION_SETTINGS_PATH, MEMBERS_PATH, SIGN_IN_PATH } from "./prefixes";

/** The sections that show and change the chosen institution's data (`institutionOf`). */
const INSTITUTION_DATA_PATHS = [MEMBERS_PATH, ANALYTICS_PATH, INSTITUTION_SETTINGS_PATH];

/** The signed-in browser of a dashboard page. */
export interface DashboardSession {
  principal: Principal;
  /** The request's service context, with the principal: what every page hands to the services. */
  ctx: PrincipalContext;
  /** This session's CSRF token, for every form the page renders. */
  csrf: string;
  /** The institution the pages act on: an admin's own, the one staff chose, or none yet. */
  institution: { id: string; name: string; slug: string } | null;
}

declare module "hono" {
  interface ContextVariableMap {
    /** Set by `signedIn` on every page behind the sign-in. */
    dashboard: DashboardSession;
  }
}

export const CSRF_FIELD = "_csrf";

function signInRedirect(c: Context<AppEnv>): Response {
  const next = c.req.method === "GET" ? new URL(c.req.url).pathname + new URL(c.req.url).search : "";
  return c.redirect(next ? `${SIGN_IN_PATH}?next=${encodeURIComponent(next)}` : SIGN_IN_PATH, 303);
}

/**
 * The session cookie is a session token of the API's own kind: it is admitted by its TokenGate
 * exactly as a bearer token is (revocation and expiry at once, the same rate limits), then held to
 * the dashboard's roles. No cookie, or a session that ended, goes to the sign-in page; a learner or
 * instructor gets a 403 page.
 */
export const signedIn = createMiddleware<AppEnv>(async function signedIn(c, next) {
  const token = sessionCookie(c);
  if (!token) return signInRedirect(c);
  let principal: Principal;
  try {
    ({ principal } = await admitToken(c, token));
  } catch (error) {
    if (error instanceof ApiError && error.code === "unauthenticated") {
      clearSessionCookies(c);
      return signInRedirect(c);
    }
    throw error;
  }
  if (principal.token.kind !== "session") {
    // Only sign-in puts a token in this cookie; an API token is not a browser session.
    clearSessionCookies(c);
    return signInRedirect(c);
  }
  enforce(mayUseDashboard(principal));
  const ctx = c.get("ctx") as PrincipalContext;
  let institution: DashboardSession["institution"] = null;
  if (!choosesInstitution(principal)) {
    institution = principal.institution;
  } else {
    const chosen = chosenInstitutionCookie(c);
    if (chosen) {
      // Read where it lives (design/multi-database.md#platform-wide-reads).
      await useInstitutionDatabase(ctx, chosen);
      // The institutions service decides whether this caller may see it, as for the API.
      institution = await getInstitution(ctx, chosen).then(
        ({ institution: row }) => ({ id: row.id, name: row.name, slug: row.slug }),
        (error) => {
          if (error instanceof ApiError && error.code === "not_found") return null;
          throw error;
        },
      );
      // The sections of its data run there, as the API's routes by institution path do; staff's own
      // pages (their API tokens, the chooser) in their own database.
      if (!INSTITUTION_DATA_PATHS.some((path) => c.req.path === path || c.req.path.startsWith(`${path}/`)))
        useDatabase(ctx, principal.database ?? FIRST_DATABASE);
    }
  }
  c.set("dashboard", { principal, ctx, csrf: await sessionCsrfToken(token), institution });
  await next();
});

function csrfRefused(): PageError {
  return new PageError(
    403,
    "This form could not be accepted",
    "The page it came from has expired, or it was sent from another site. Nothing was changed. Go back, reload the page and try again.",
  );
}

async function formField(c: Context<AppEnv>, name: string): Promise<string> {
  return field(await formOf(c), name);
}

/** Every state-changing form behind the sign-in: the session's synchronizer token, and a same-origin post. */
export const checkCsrf = createMiddleware<AppEnv>(async function checkCsrf(c, next) {
  if (crossOrigin(c)) throw csrfRefused();
  if (!sameSecret(await formField(c, CSRF_FIELD), c.var.dashboard.csrf)) throw csrfRefused();
  await next();
});

/** The forms before a session (sign-in, accepting an invitation): the double-submit cookie. */
export const checkLoginCsrf = createMiddleware<AppEnv>(async function checkLoginCsrf(c, next) {
  if (crossOrigin(c)) throw csrfRefused();
  const cookie = loginCsrfCookie(c);
  if (!cookie || !sameSecret(await formField(c, CSRF_FIELD), cookie)) throw csrfRefused();
  await next();
});
