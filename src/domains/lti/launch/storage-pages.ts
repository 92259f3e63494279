import { html, raw } from "hono/html";
import { toBase64, utf8 } from "../../../platform/crypto/encoding";
import { platformFrameAncestors } from "../registrations/dynamic/pages";
import type { ConsumerRow } from "../registrations/service";
import { STORAGE_FIELDS, storageKeys } from "./platform-storage";

/**
 * The two pages of a launch through the platform's storage (1EdTech LTI Client Side postMessage),
 * for browsers that block third-party cookies: the login's page puts the state and nonce into the
 * platform's frame (`lti.put_data`) and goes on to the platform's authorization endpoint; the
 * callback's page gets them back (`lti.get_data`) and posts the launch again, with what it read, from
 * Lingua's own origin. Strict CSP: one script and one style, allowed by their SHA-256 hashes; the
 * per-launch values are escaped into `data-` attributes; only the platform may frame them.
 */

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:2rem auto;max-width:40rem;padding:0 1rem;color:#1f2328}
h1{font-size:1.4rem}.muted{color:#6b7280;font-size:.9rem}`;

/** How long the page waits for each answer of the platform's frame. */
export const STORAGE_TIMEOUT_MS = 2000;

/**
 * The script of both pages. Messages go to the frame `data-target` names (`_parent`: the parent or
 * opener itself, else its child frame of that name) with the platform's OIDC authorization origin as
 * target origin, and only answers from that origin, with the message's id, count.
 */
const SCRIPT = `(function () {
  var el = document.getElementById("lti-storage");
  var d = el.dataset;
  function frame() {
    var w = window.opener || window.parent;
    if (d.target === "_parent") return w;
    try { return w.frames[d.target] || w; } catch (e) { return w; }
  }
  function send(subject, fields) {
    return new Promise(function (resolve, reject) {
      var id = "lingua-" + Array.from(crypto.getRandomValues(new Uint8Array(16)), function (b) { return (b + 256).toString(16).slice(1); }).join("");
      var timer = setTimeout(function () { stop(); reject("timeout"); }, ${STORAGE_TIMEOUT_MS});
      function stop() { clearTimeout(timer); window.removeEventListener("message", listen); }
      function listen(event) {
        var data = event.data;
        if (event.origin !== d.origin || !data || typeof data !== "object") return;
        if (data.message_id !== id || data.subject !== subject + ".response") return;
        stop();
        if (data.error) reject(String((data.error && data.error.code) || "error"));
        else resolve(data);
      }
      window.addEventListener("message", listen);
      var message = { subject: subject, message_id: id };
      for (var name in fields) message[name] = fields[name];
      try { frame().postMessage(message, d.origin); } catch (e) { stop(); reject("unreachable"); }
    });
  }
  function get(key) {
    return send("lti.get_data", { key: key }).then(function (data) {
      if (data.key !== key || typeof data.value !== "string") throw "not_found";
      return data.value;
    });
  }
  if (d.step === "login") {
    // Both at once: a platform that does not answer holds the launch up for one time-out, not two.
    Promise.all([
      send("lti.put_data", { key: d.stateKey, value: d.state }),
      send("lti.put_data", { key: d.nonceKey, value: d.nonce })
    ])
      .catch(function () {})
      .then(function () { location.replace(d.next); });
    return;
  }
  function field(name, value) {
    var input = document.createElement("input");
    input.type = "hidden"; input.name = name; input.value = value;
    el.appendChild(input);
  }
  Promise.all([get(d.stateKey), get(d.nonceKey)])
    .then(function (values) { field("${STORAGE_FIELDS.state}", values[0]); field("${STORAGE_FIELDS.nonce}", values[1]); })
    .catch(function (code) { field("${STORAGE_FIELDS.error}", typeof code === "string" ? code : "error"); })
    .then(function () { el.submit(); });
})();`;

let hashes: Promise<{ script: string; style: string }> | undefined;

async function hashOf(text: string): Promise<string> {
  return `'sha256-${toBase64(await crypto.subtle.digest("SHA-256", utf8(text)))}'`;
}

/** Computed at the first page (Workers allow no crypto at global scope), then kept by the isolate. */
function sourceHashes() {
  hashes ??= Promise.all([hashOf(SCRIPT), hashOf(STYLE)]).then(([script, style]) => ({ script, style }));
  return hashes;
}

/** An origin (http/https) of a URL, or null. */
export function httpOrigin(value: string | null | undefined): string | null {
  if (!value) return null;
  try {
    const url = new URL(value);
    return url.protocol === "https:" || url.protocol === "http:" ? url.origin : null;
  } catch {
    return null;
  }
}

/**
 * Who may frame the pages: the platform, by the registration's issuer and OIDC authorization URL
 * (each with its parent domain's hosts, as dynamic registration's pages), and the page that sent the
 * login (a Canvas on its own domain frames the tool from there).
 */
export function storageFrameAncestors(consumer: ConsumerRow, loginOrigin: string | null): string {
  const sources = new Set<string>();
  for (const url of [consumer.issuer, consumer.authLoginUrl])
    for (const source of platformFrameAncestors(url).split(" ")) if (source !== "'none'") sources.add(source);
  const origin = httpOrigin(loginOrigin);
  if (origin) sources.add(origin);
  return sources.size > 0 ? [...sources].join(" ") : "'none'";
}

async function page(body: ReturnType<typeof html>, csp: string): Promise<Response> {
  const { script, style } = await sourceHashes();
  const document = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="same-origin">
<title>Lingua</title><style>${raw(STYLE)}</style></head>
<body>${body}
<noscript><p>Lingua needs JavaScript to open this activity in a browser that blocks third-party cookies.</p></noscript>
<script>${raw(SCRIPT)}</script></body></html>`;
  return new Response((await document).toString(), {
    status: 200,
    headers: {
      "Content-Type": "text/html; charset=utf-8",
      "Cache-Control": "no-store",
      "Content-Security-Policy": `default-src 'none'; script-src ${script}; style-src ${style}; base-uri 'none'; ${csp}`,
    },
  });
}

export interface StorageLaunch {
  /** The login's `lti_storage_target`. */
  target: string;
  /** The origin of the platform's OIDC authorization endpoint: the messages' target origin. */
  platformOrigin: string;
  state: string;
  nonce: string;
  consumer: ConsumerRow;
  loginOrigin: string | null;
}

/** The login's page: stores the state and nonce in the platform's frame, then goes to `next` (the authorization request). */
export function storageLoginPage(launch: StorageLaunch & { next: string }): Promise<Response> {
  const keys = storageKeys(launch.state, launch.nonce);
  return page(
    html`<h1>Opening Lingua…</h1>
<div id="lti-storage" data-step="login" data-target="${launch.target}" data-origin="${launch.platformOrigin}"
 data-state-key="${keys.state}" data-state="${launch.state}" data-nonce-key="${keys.nonce}" data-nonce="${launch.nonce}"
 data-next="${launch.next}"></div>
<p class="muted">If nothing happens, <a href="${launch.next}">continue to your learning platform</a>.</p>`,
    `form-action 'none'; frame-ancestors ${storageFrameAncestors(launch.consumer, launch.loginOrigin)}`,
  );
}

/**
 * The callback's page: reads the state and nonce back from the platform's frame and posts the launch
 * (`id_token`, `state`) with them to `action` (the callback it was posted to). `appOrigin`: where the
 * callback's answer redirects (form-action covers the redirect of a form's post).
 */
export function storageCallbackPage(
  launch: StorageLaunch & { action: string; idToken: string; appOrigin: string | null },
): Promise<Response> {
  const keys = storageKeys(launch.state, launch.nonce);
  const formAction = ["'self'", launch.appOrigin].filter(Boolean).join(" ");
  return page(
    html`<h1>Opening Lingua…</h1>
<form id="lti-storage" method="post" action="${launch.action}" data-step="callback" data-target="${launch.target}"
 data-origin="${launch.platformOrigin}" data-state-key="${keys.state}" data-nonce-key="${keys.nonce}">
<input type="hidden" name="id_token" value="${launch.idToken}"><input type="hidden" name="state" value="${launch.state}">
</form>`,
    `form-action ${formAction}; frame-ancestors ${storageFrameAncestors(launch.consumer, launch.loginOrigin)}`,
  );
}
