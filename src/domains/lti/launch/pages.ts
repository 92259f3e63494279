import type { Context } from "hono";
import { html, raw } from "hono/html";
import { randomBytes, toBase64Url } from "../../../platform/crypto/encoding";
import { ERROR_CATALOGUE } from "../../../platform/error-catalogue";
import type { ApiError } from "../../../platform/errors";

/**
 * The pages a browser sees inside the platform's iframe: readable errors and the default launch
 * page. They may be framed by any site (the platform embeds them); nothing else of the API may.
 */

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:2rem auto;max-width:40rem;padding:0 1rem;color:#1f2328}
h1{font-size:1.4rem}code{background:#f3f4f6;padding:.1rem .3rem;border-radius:4px}.muted{color:#6b7280;font-size:.9rem}`;

export { wantsJson } from "../../../platform/http/negotiation";

function frameable(csp: string): Record<string, string> {
  return {
    "Content-Type": "text/html; charset=utf-8",
    "Cache-Control": "no-store",
    // frame-ancestors lets the platform embed the page (and keeps the default X-Frame-Options: DENY off it).
    "Content-Security-Policy": `${csp}; frame-ancestors *`,
  };
}

/** An error as a page for a person, with what to tell the platform's administrator. */
export async function errorPage(c: Context, error: ApiError): Promise<Response> {
  const reason = typeof error.extensions?.reason === "string" ? error.extensions.reason : null;
  const launchId = typeof error.extensions?.launch_id === "string" ? error.extensions.launch_id : null;
  const body = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Lingua: ${ERROR_CATALOGUE[error.code].title}</title><style>${raw(STYLE)}</style></head>
<body><h1>Lingua could not open this activity</h1>
<p>${error.message}</p>
${reason ? html`<p>Reason: <code>${reason}</code></p>` : ""}
<p class="muted">Try again from your course page. If it keeps failing, give your learning platform's administrator
these details${launchId ? html` (the launch log at <code>GET /api/integrations/lti-launches/${launchId}</code> has them too)` : ""}:
request <code>${String(c.get("requestId") ?? "")}</code>.</p></body></html>`;
  return new Response((await body).toString(), {
    status: error.status,
    headers: { ...frameable("default-src 'none'; style-src 'unsafe-inline'"), ...error.headers },
  });
}

const APP_SCRIPT = `
const out = document.getElementById("out");
const code = new URLSearchParams(location.hash.slice(1)).get("code");
history.replaceState(null, "", location.pathname);
if (!code) { out.textContent = "Open Lingua from your course page."; }
else fetch("/api/lti/session", { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" }, body: JSON.stringify({ code }) })
  .then(async (res) => {
    const body = await res.json();
    if (!res.ok) { out.textContent = body.detail || "The launch could not be completed."; return; }
    const target = body.launch.target;
    document.getElementById("who").textContent = "Signed in as " + body.user.name;
    out.textContent = target ? (target.type === "lesson" ? "Lesson: " : "Course: ") + (target.title || target.id) : "Your Lingua courses";
    // A browser that blocks third-party storage in the platform's iframe throws here: the page keeps going.
    try { sessionStorage.setItem("lingua_session", JSON.stringify(body.session)); } catch {}
  })
  .catch(() => { out.textContent = "The launch could not be completed."; });`;

/** The default launch page (no LTI_APP_URL): exchanges the fragment's code for the session and shows the target. */
export async function appPage(): Promise<Response> {
  const nonce = toBase64Url(randomBytes(16));
  const body = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Lingua</title><style>${raw(STYLE)}</style></head>
<body><h1 id="out">Opening Lingua…</h1><p id="who" class="muted"></p>
<script nonce="${nonce}">${raw(APP_SCRIPT)}</script></body></html>`;
  return new Response((await body).toString(), {
    status: 200,
    headers: frameable(
      `default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-${nonce}'; connect-src 'self'`,
    ),
  });
}
