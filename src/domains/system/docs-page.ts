import { Scalar } from "@scalar/hono-api-reference";
import type { Context } from "hono";
import { sha256Base64 } from "../../platform/crypto/encoding";

/** Pinned, so the CSP below always describes the script that runs. */
const SCALAR_CDN = "https://cdn.jsdelivr.net/npm/@scalar/api-reference@1.72.1";

const renderScalar = Scalar({ url: "/api/openapi.json", pageTitle: "Lingua API reference", cdn: SCALAR_CDN });

let page: Promise<{ html: string; csp: string }> | null = null;

/**
 * The reference page runs exactly two scripts: Scalar from the pinned CDN URL and its inline
 * initialiser, which the CSP admits by hash. Nothing else may load, frame or post.
 */
async function build(c: Context): Promise<{ html: string; csp: string }> {
  const response = await renderScalar(c, async () => {});
  const html = await (response as Response).text();
  const inline = [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
  const hashes = await Promise.all(inline.map(async (script) => `'sha256-${await sha256Base64(script)}'`));
  const csp = [
    "default-src 'none'",
    `script-src ${SCALAR_CDN} ${hashes.join(" ")}`,
    "style-src 'unsafe-inline' https://cdn.jsdelivr.net https://fonts.scalar.com",
    "font-src https://cdn.jsdelivr.net https://fonts.scalar.com data:",
    "img-src 'self' data: https:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
  return { html, csp };
}

export async function docsPage(c: Context): Promise<Response> {
  page ??= build(c);
  const { html, csp } = await page;
  return new Response(html, {
    headers: {
      "Content-Type": "text/html; charset=utf-8",
      "Content-Security-Policy": csp,
      "Cache-Control": "public, max-age=300",
    },
  });
}
