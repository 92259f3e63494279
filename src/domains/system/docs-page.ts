/**
 * Scalar's standalone bundle, served by Workers Static Assets from this origin (wrangler.toml
 * [assets], filled by scripts/build-assets.mjs): the worker never loads it, and the page needs no CDN.
 */
const SCALAR_SCRIPT_PATH = "/api/docs/scalar-api-reference.js";

/**
 * Scalar's configuration: nothing that calls Scalar's own servers — no web fonts, no telemetry, no
 * AI agent, no MCP generator, no developer toolbar (its deploy and share menus).
 */
const SCALAR_CONFIGURATION = {
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: "never",
};

/**
 * Scalar reads the document URL and its configuration from the empty `#api-reference` element (an
 * empty script runs nothing), so the page has no inline script and its CSP no hash or nonce.
 */
const HTML = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Lingua API reference</title>
  </head>
  <body>
    <script id="api-reference" data-url="/api/openapi.json" data-configuration='${JSON.stringify(SCALAR_CONFIGURATION)}'></script>
    <script src="${SCALAR_SCRIPT_PATH}"></script>
  </body>
</html>
`;

/**
 * Everything the page loads comes from this origin: the script, the document (`connect-src`), and
 * the styles Scalar injects (inline, hence `'unsafe-inline'` for styles only). Nothing may frame it
 * or be posted from it.
 */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "font-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

export function docsPage(): Response {
  return new Response(HTML, {
    headers: {
      "Content-Type": "text/html; charset=utf-8",
      "Content-Security-Policy": CSP,
      "Cache-Control": "public, max-age=300",
    },
  });
}
