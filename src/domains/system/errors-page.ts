import { ERROR_CATALOGUE, type ErrorCode } from "../../platform/error-catalogue";

/**
 * The error reference: every code of the catalogue in `platform/errors.ts`, with its status, title,
 * meaning and what to do, one section per code whose `id` is the code. A problem's `type` is this
 * page's URL with the code as fragment, so that every `type` resolves on the API's own origin. The
 * page is generated from the catalogue (never from a copy), built once per isolate.
 */

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** The catalogue's texts are plain, with `code` spans in backticks. */
const inline = (text: string) => escapeHtml(text).replace(/`([^`]+)`/g, "<code>$1</code>");

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}
code{font:0.9em ui-monospace,monospace;background:#f2f2f4;padding:0.1em 0.3em;border-radius:3px}
pre{background:#f2f2f4;padding:0.8rem;overflow:auto}pre code{background:none;padding:0}
table{border-collapse:collapse}td,th{text-align:left;padding:0.2rem 0.8rem 0.2rem 0;border-bottom:1px solid #ddd}
section{border-top:1px solid #ddd;margin-top:1.5rem}section:target{background:#fff8d6}
h2{font-size:1.15rem;margin-bottom:0.2rem}.status{color:#555;margin-top:0}`;

function build(): string {
  const codes = Object.keys(ERROR_CATALOGUE) as ErrorCode[];
  const rows = codes
    .map((code) => {
      const { status, title } = ERROR_CATALOGUE[code];
      return `<tr><td>${status}</td><td><a href="#${code}"><code>${code}</code></a></td><td>${escapeHtml(title)}</td></tr>`;
    })
    .join("\n");
  const sections = codes
    .map((code) => {
      const { status, title, meaning, action } = ERROR_CATALOGUE[code];
      return `<section id="${code}">
<h2><code>${code}</code></h2>
<p class="status">${status} · ${escapeHtml(title)}</p>
<p>${inline(meaning)}</p>
<p><strong>What to do:</strong> ${inline(action)}</p>
</section>`;
    })
    .join("\n");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8" />
<meta name="viewport" content="width=device-width, initial-scale=1" />
<title>Lingua API errors</title>
<style>${STYLE}</style>
</head>
<body>
<h1>Lingua API errors</h1>
<p>Every error of the Lingua API is <code>application/problem+json</code> (RFC 9457). Its
<code>code</code> is stable and machine-readable: act on it, not on <code>title</code> or
<code>detail</code>. Its <code>type</code> is the address of the code's entry on this page
(<code>/api/docs/errors#&lt;code&gt;</code> on the API's own origin), <code>detail</code> explains this
occurrence, <code>request_id</code> (also in <code>X-Request-Id</code>) identifies the request for
support, and a validation failure lists every failing field in <code>errors</code>.</p>
<pre><code>{
  "type": "…/api/docs/errors#validation_failed",
  "title": "Validation failed",
  "status": 422,
  "code": "validation_failed",
  "detail": "per_page: must be &lt;= 100",
  "errors": [{ "path": "per_page", "message": "must be &lt;= 100" }],
  "request_id": "req_…"
}</code></pre>
<p>The operations and their schemas: <a href="/api/docs">the API reference</a>.</p>
<table>
<thead><tr><th>status</th><th>code</th><th>title</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
${sections}
</body>
</html>
`;
}

let page: string | null = null;

/** Inline styles only; nothing loaded, nothing run, nothing may frame it or be posted from it. */
const CSP =
  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function errorsPage(): Response {
  page ??= build();
  return new Response(page, {
    headers: {
      "Content-Type": "text/html; charset=utf-8",
      "Content-Security-Policy": CSP,
      "Cache-Control": "public, max-age=300",
    },
  });
}
