import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { randomBytes, timingSafeEqual, toBase64Url, utf8 } from "../platform/crypto/encoding";
import { DASHBOARD } from "./prefixes";

declare module "hono" {
  interface ContextVariableMap {
    /** This page's CSP nonce: the only scripts that run carry it (set by `pageHeaders`). */
    nonce: string;
  }
}

/**
 * The dashboard's Content-Security-Policy: scripts only with this response's nonce, styles and
 * images from this origin only, forms posted to this origin only, nothing may frame a page.
 */
export function contentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; ");
}

/**
 * Every dashboard response: a fresh nonce and its CSP, no caching (pages show secrets and
 * per-user state), no framing. Runs inside `responseHeaders`, which adds the request id and the
 * security headers every response carries and keeps this CSP.
 */
export const pageHeaders = createMiddleware<AppEnv>(async function pageHeaders(c, next) {
  const nonce = toBase64Url(randomBytes(18));
  c.set("nonce", nonce);
  await next();
  const headers = c.res.headers;
  if (!headers.has("Content-Security-Policy"))
    headers.set("Content-Security-Policy", contentSecurityPolicy(nonce));
  headers.set("X-Frame-Options", "DENY");
  if (!headers.has("Cache-Control")) headers.set("Cache-Control", "no-store");
});

/** An HTML page: the doctype and the rendered element. */
export async function html(c: Context<AppEnv>, element: unknown, status = 200): Promise<Response> {
  const text = `<!doctype html>${await Promise.resolve(String(await element))}`;
  return c.html(text, status as 200);
}

// Cookies: all `__Host-` (Secure, Path=/, no Domain: this origin only), HttpOnly, SameSite=Lax.
const SESSION_COOKIE = "lingua_session";
const LOGIN_CSRF_COOKIE = "lingua_csrf";
const INSTITUTION_COOKIE = "lingua_institution";
const BASE_COOKIE = { path: "/", secure: true, httpOnly: true, sameSite: "Lax", prefix: "host" } as const;

export function sessionCookie(c: Context<AppEnv>): string | undefined {
  return getCookie(c, SESSION_COOKIE, "host");
}

export function setSessionCookie(c: Context<AppEnv>, token: string, maxAgeSeconds: number): void {
  setCookie(c, SESSION_COOKIE, token, { ...BASE_COOKIE, maxAge: Math.max(0, Math.floor(maxAgeSeconds)) });
}

export function clearSessionCookies(c: Context<AppEnv>): void {
  deleteCookie(c, SESSION_COOKIE, BASE_COOKIE);
  deleteCookie(c, INSTITUTION_COOKIE, BASE_COOKIE);
}

/** The institution platform staff chose (only ever read for staff; the service checks it again). */
export function chosenInstitutionCookie(c: Context<AppEnv>): string | undefined {
  return getCookie(c, INSTITUTION_COOKIE, "host");
}

export function setChosenInstitutionCookie(c: Context<AppEnv>, id: string, maxAgeSeconds: number): void {
  setCookie(c, INSTITUTION_COOKIE, id, { ...BASE_COOKIE, maxAge: Math.max(0, Math.floor(maxAgeSeconds)) });
}

/**
 * The double-submit value of the forms that come before a session (sign-in, accepting an
 * invitation): a random value in a cookie and in the form, which another site can neither read nor
 * set. Made on the form's GET when missing; lives for an hour.
 */
export function loginCsrfToken(c: Context<AppEnv>): string {
  const existing = getCookie(c, LOGIN_CSRF_COOKIE, "host");
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const fresh = toBase64Url(randomBytes(32));
  setCookie(c, LOGIN_CSRF_COOKIE, fresh, { ...BASE_COOKIE, maxAge: 3600 });
  return fresh;
}

export function loginCsrfCookie(c: Context<AppEnv>): string | undefined {
  return getCookie(c, LOGIN_CSRF_COOKIE, "host");
}

/** Compares two secrets in time that depends only on their length. */
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(utf8(a), utf8(b));
}

/**
 * The synchronizer token of a signed-in browser's forms: HMAC-SHA256 of a fixed label keyed by the
 * session token itself (which only the HttpOnly cookie holds), so it is bound to that session, needs
 * no storage, and dies with the session.
 */
export async function sessionCsrfToken(sessionToken: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    utf8(sessionToken),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign("HMAC", key, utf8("lingua-dashboard-csrf-v1"));
  return toBase64Url(new Uint8Array(mac));
}

/**
 * A state-changing request that a browser says came from another origin (`Origin` naming another
 * origin, or `Sec-Fetch-Site: cross-site`) is refused before its token is even read: defence in
 * depth beside the CSRF token. `Origin: null` is no evidence either way — browsers send it for a
 * same-origin form post from a page under `Referrer-Policy: no-referrer`, which every response of
 * this worker carries — so the token decides.
 */
export function crossOrigin(c: Context<AppEnv>): boolean {
  const origin = c.req.header("Origin");
  if (origin && origin !== "null" && origin !== new URL(c.req.url).origin) return true;
  return c.req.header("Sec-Fetch-Site") === "cross-site";
}

/** A `next` path to return to after signing in: a dashboard path of this origin, nothing else. */
export function safeNext(value: string | undefined | null, fallback: string): string {
  if (!value?.startsWith(`${DASHBOARD}/`) && value !== DASHBOARD) return fallback;
  return /[\\\r\n\t]/.test(value) ? fallback : value;
}
