import { html, raw } from "hono/html";
import { randomBytes, toBase64Url } from "../../../platform/crypto/encoding";

/**
 * The pages of deep linking's browser flow: the selection page the instructor chooses on, and the
 * page that carries the signed response back to the platform. Both have a strict Content-Security-
 * Policy (script and style only with the response's nonce, nothing loaded from elsewhere, forms
 * posting only to the platform's return URL), may be framed by the platform's origins only, show
 * every value escaped (hono/html), and are never cached.
 */

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:1.5rem auto;max-width:44rem;padding:0 1rem;color:#1f2328}
h1{font-size:1.3rem}ul{list-style:none;padding-left:0}ul ul{padding-left:1.5rem}li{margin:.2rem 0}
.muted{color:#6b7280;font-size:.9rem}.bar{display:flex;gap:.5rem;align-items:center;flex-wrap:wrap;margin:.8rem 0}
button{font:inherit;padding:.3rem .9rem}`;

function pageHeaders(csp: string): Record<string, string> {
  return {
    "Content-Type": "text/html; charset=utf-8",
    "Cache-Control": "no-store",
    "Content-Security-Policy": csp,
  };
}

/** The policy of a page: its own nonce's script and style only; framed by and posting to the platform. */
function policy(nonce: string, input: { frameOrigins: string[]; formOrigin: string; connect: boolean }) {
  const ancestors = input.frameOrigins.length > 0 ? input.frameOrigins.join(" ") : "'none'";
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    ...(input.connect ? ["connect-src 'self'"] : []),
    `form-action ${input.formOrigin}`,
    `frame-ancestors ${ancestors}`,
    "base-uri 'none'",
  ].join("; ");
}

const SELECTION_SCRIPT = `
const root = document.getElementById("dl");
const launch = root.dataset.launch;
const single = root.dataset.multiple === "false";
const status = document.getElementById("status");
const list = document.getElementById("items");
const more = document.getElementById("more");
const code = new URLSearchParams(location.hash.slice(1)).get("code");
history.replaceState(null, "", location.pathname);
let token = null;
let page = 1;
async function api(path, init) {
  const res = await fetch(path, { ...init, headers: { Accept: "application/json", Authorization: "Bearer " + token, ...(init && init.headers) } });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(body.detail || "The request failed (" + res.status + ").");
  return body;
}
function choice(kind, id, text) {
  const label = document.createElement("label");
  const input = document.createElement("input");
  input.type = single ? "radio" : "checkbox";
  input.name = single ? "choice" : kind;
  input.value = id;
  input.dataset.kind = kind;
  label.append(input, " " + text);
  return label;
}
async function load(reset) {
  const q = document.getElementById("q").value.trim();
  const params = new URLSearchParams({ page: String(page), per_page: "20" });
  if (q.length >= 2) params.set("q", q);
  const body = await api("/api/lti/deep-linking/" + encodeURIComponent(launch) + "/items?" + params);
  if (reset) list.replaceChildren();
  for (const course of body.data) {
    const item = document.createElement("li");
    item.append(choice("course_id", course.id, course.title + " (whole course)"));
    const lessons = document.createElement("ul");
    for (const lesson of course.lessons) {
      const row = document.createElement("li");
      row.append(choice("lesson_id", lesson.id, lesson.position + ". " + lesson.title));
      lessons.append(row);
    }
    item.append(lessons);
    list.append(item);
  }
  if (body.data.length === 0 && reset) status.textContent = "No published course matches.";
  else status.textContent = "";
  more.hidden = !body.links.next;
}
async function send(items) {
  const body = new URLSearchParams();
  for (const input of items) body.append(input.dataset.kind, input.value);
  const grade = document.getElementById("grade");
  if (items.length > 0 && grade && grade.checked) body.set("score_maximum", document.getElementById("points").value);
  try {
    const answer = await api("/api/lti/deep-linking/" + encodeURIComponent(launch) + "/response", {
      method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body,
    });
    const back = document.getElementById("back");
    back.elements.JWT.value = answer.jwt;
    status.textContent = "Returning to your course…";
    back.submit();
  } catch (error) { status.textContent = error.message; }
}
document.getElementById("search").addEventListener("submit", (event) => { event.preventDefault(); page = 1; load(true).catch((e) => { status.textContent = e.message; }); });
more.addEventListener("click", () => { page += 1; load(false).catch((e) => { status.textContent = e.message; }); });
document.getElementById("pick").addEventListener("submit", (event) => { event.preventDefault(); send([...list.querySelectorAll("input:checked")]); });
document.getElementById("cancel").addEventListener("click", () => send([]));
if (!code) status.textContent = "Open the content selection from your course page.";
else fetch("/api/lti/session", { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" }, body: JSON.stringify({ code }) })
  .then(async (res) => {
    const body = await res.json();
    if (!res.ok) throw new Error(body.detail || "The launch could not be completed.");
    token = body.session.token;
    await load(true);
  })
  .catch((error) => { status.textContent = error.message; });`;

/**
 * The selection page: exchanges the fragment's code for the launch's session, lists the published
 * courses and their lessons through `GET …/items`, and posts the choice to `POST …/response` as a form
 * body; the JWT it answers goes to the platform in the page's `back` form (action: the return URL).
 */
export async function selectionPage(input: {
  launchId: string;
  returnUrl: string;
  frameOrigins: string[];
  acceptMultiple: boolean;
  acceptLineItem: boolean;
}): Promise<Response> {
  const nonce = toBase64Url(randomBytes(16));
  const body = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Lingua: choose content</title><style nonce="${nonce}">${raw(STYLE)}</style></head>
<body><main id="dl" data-launch="${input.launchId}" data-multiple="${String(input.acceptMultiple)}">
<h1>Choose Lingua content to add</h1>
<form id="search" class="bar"><label>Search courses <input id="q" type="search" minlength="2" maxlength="100"></label><button type="submit">Search</button></form>
<form id="pick"><ul id="items"></ul><p><button id="more" type="button" hidden>More courses</button></p>
${input.acceptLineItem ? html`<p class="bar"><label><input id="grade" type="checkbox"> Create a gradebook column worth</label> <input id="points" type="number" min="1" value="100" aria-label="points"> points</p>` : ""}
<p class="bar"><button type="submit">Add to course</button><button id="cancel" type="button">Cancel</button></p></form>
<p id="status" class="muted" role="status">Loading…</p></main>
<form id="back" method="post" action="${input.returnUrl}"><input type="hidden" name="JWT" value=""></form>
<script nonce="${nonce}">${raw(SELECTION_SCRIPT)}</script></body></html>`;
  return new Response((await body).toString(), {
    status: 200,
    headers: pageHeaders(
      policy(nonce, {
        frameOrigins: input.frameOrigins,
        formOrigin: new URL(input.returnUrl).origin,
        connect: true,
      }),
    ),
  });
}

/** The response for a browser: a form posting `JWT` to the platform's return URL, submitted at once. */
export async function autoSubmitPage(input: {
  returnUrl: string;
  jwt: string;
  frameOrigins: string[];
}): Promise<Response> {
  const nonce = toBase64Url(randomBytes(16));
  const body = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Lingua: returning to your course</title><style nonce="${nonce}">${raw(STYLE)}</style></head>
<body><form id="return" method="post" action="${input.returnUrl}"><input type="hidden" name="JWT" value="${input.jwt}">
<p>Returning to your course…</p><p><button type="submit">Continue</button></p></form>
<script nonce="${nonce}">document.getElementById("return").submit();</script></body></html>`;
  return new Response((await body).toString(), {
    status: 200,
    headers: pageHeaders(
      policy(nonce, {
        frameOrigins: input.frameOrigins,
        formOrigin: new URL(input.returnUrl).origin,
        connect: false,
      }),
    ),
  });
}

/** An error of the selection page, as a page (the launch is unknown, refused or answered already). */
export async function selectionErrorPage(status: number, message: string): Promise<Response> {
  const nonce = toBase64Url(randomBytes(16));
  const body = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Lingua: content selection</title><style nonce="${nonce}">${raw(STYLE)}</style></head>
<body><h1>Lingua cannot open this content selection</h1><p>${message}</p>
<p class="muted">Start adding content again from your course page.</p></body></html>`;
  return new Response((await body).toString(), {
    status,
    headers: pageHeaders(
      `default-src 'none'; style-src 'nonce-${nonce}'; form-action 'none'; frame-ancestors *; base-uri 'none'`,
    ),
  });
}
