import { html, raw } from "hono/html";
import { toBase64, utf8 } from "../../../../platform/crypto/encoding";
import { ERROR_CATALOGUE } from "../../../../platform/error-catalogue";
import type { ApiError } from "../../../../platform/errors";
import type { ConsumerRow } from "../service";

/**
 * The pages of dynamic registration, shown in the platform's iframe or window. Strict CSP: nothing
 * loads, the one style and the one script are allowed by their SHA-256 hashes, every value shown is
 * escaped (hono/html), and only the platform may frame them (`frame-ancestors`, below).
 */

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:2rem auto;max-width:40rem;padding:0 1rem;color:#1f2328}
h1{font-size:1.4rem}code{background:#f3f4f6;padding:.1rem .3rem;border-radius:4px}.muted{color:#6b7280;font-size:.9rem}
dt{font-weight:600}dd{margin:0 0 .5rem}`;

/** LTI Dynamic Registration's close message, to the window that opened the page or the frame's parent. */
const CLOSE_SCRIPT = `(window.opener || window.parent).postMessage({ subject: "org.imsglobal.lti.close" }, "*");`;

async function hashSource(text: string): Promise<string> {
  return `'sha256-${toBase64(await crypto.subtle.digest("SHA-256", utf8(text)))}'`;
}

/**
 * Who may frame the page: the platform, as its configuration URL names it (once the configuration
 * is validated, its issuer prefixes that URL, so this is the issuer's origin). A platform's admin
 * pages may live on a sibling host of its issuer (a hosted Canvas' issuer is canvas.instructure.com,
 * its pages school.instructure.com), so a host of three labels or more also allows its parent
 * domain's hosts. No URL, or one that is not http(s): nobody.
 */
export function platformFrameAncestors(configurationUrl: string | undefined): string {
  let url: URL;
  try {
    url = new URL(configurationUrl ?? "");
  } catch {
    return "'none'";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "'none'";
  const sources = [url.origin];
  const labels = url.hostname.split(".");
  const address = /^[\d.]+$/.test(url.hostname) || url.hostname.startsWith("[");
  if (!address && labels.length >= 3)
    sources.push(`${url.protocol}//*.${labels.slice(1).join(".")}${url.port ? `:${url.port}` : ""}`);
  return sources.join(" ");
}

async function page(
  status: number,
  title: string,
  body: ReturnType<typeof html>,
  options: { frameAncestors: string; script?: string },
): Promise<Response> {
  const scriptSrc = options.script ? `; script-src ${await hashSource(options.script)}` : "";
  const document = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Lingua: ${title}</title><style>${raw(STYLE)}</style></head>
<body>${body}${options.script ? html`<script>${raw(options.script)}</script>` : ""}</body></html>`;
  return new Response((await document).toString(), {
    status,
    headers: {
      "Content-Type": "text/html; charset=utf-8",
      "Cache-Control": "no-store",
      "Content-Security-Policy": `default-src 'none'; style-src ${await hashSource(STYLE)}${scriptSrc}; base-uri 'none'; form-action 'none'; frame-ancestors ${options.frameAncestors}`,
    },
  });
}

/** Registered: what was stored, and the close message to the platform. */
export function registeredPage(input: { consumer: ConsumerRow; frameAncestors: string }): Promise<Response> {
  const { consumer } = input;
  const deployment = consumer.deploymentIds[0];
  return page(
    200,
    "registered",
    html`<h1>Lingua is registered with ${consumer.name}</h1>
<dl><dt>Registration</dt><dd><code>${consumer.id}</code></dd>
<dt>Client id</dt><dd><code>${consumer.clientId}</code></dd>
<dt>Deployment id</dt><dd>${deployment ? html`<code>${deployment}</code>` : "none yet"}</dd></dl>
${
  deployment
    ? ""
    : html`<p>The platform made no deployment with the registration. Once the tool is deployed, add its deployment id
to this registration (<code>PUT /api/integrations/lti-consumers/${consumer.id}</code>, <code>deployment_ids</code>): launches are refused until then.</p>`
}
<p class="muted">You can close this window; your learning platform finishes the set-up.</p>`,
    { frameAncestors: input.frameAncestors, script: CLOSE_SCRIPT },
  );
}

/** A refused registration: what went wrong, what to do, and the request id. Nothing was stored. */
export function registrationErrorPage(input: {
  error: ApiError;
  requestId: string;
  frameAncestors: string;
}): Promise<Response> {
  const { error } = input;
  const entry = ERROR_CATALOGUE[error.code];
  return page(
    error.status,
    entry.title,
    html`<h1>Lingua could not be registered</h1>
<p>${error.message}</p>
${error.errors?.length ? html`<ul>${error.errors.map((e) => html`<li><code>${e.path}</code> ${e.message}</li>`)}</ul>` : ""}
<p>Nothing was stored. ${entry.action.replace(/`/g, "")}</p>
<p class="muted">Error <code>${error.code}</code>, request <code>${input.requestId}</code>.</p>`,
    { frameAncestors: input.frameAncestors },
  );
}
