import type { Context } from "hono";

/**
 * Whether the caller asked for JSON (an integrator's client that follows a redirect itself) rather
 * than a page or a redirect (a browser): the browser flows (LTI's login, SSO's begin) answer 302 to a
 * browser and `200 { redirect_url }` to a JSON client.
 */
export function wantsJson(c: Context): boolean {
  return /application\/(problem\+)?json/i.test(c.req.header("Accept") ?? "");
}
