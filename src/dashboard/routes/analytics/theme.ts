import { contentSecurityPolicy } from "../../http";
import { DEFAULT_ACCENT, DEFAULT_PRIMARY, inkOn, isHexColour, readableOnWhite } from "../../pages/colours";
import { ANALYTICS_PATH } from "../../prefixes";

/** The institution's branding on the analytics page: its colours as a cacheable stylesheet, its logo in the CSP. */
export const ANALYTICS_THEME_PATH = `${ANALYTICS_PATH}/theme.css`;

/** The branding the page is drawn in: the institution's colours where set, the dashboard's otherwise. */
export function themeOf(branding: { primary_color?: string | null; accent_color?: string | null }) {
  const primary = isHexColour(branding.primary_color)
    ? branding.primary_color.toLowerCase()
    : DEFAULT_PRIMARY;
  const accent = isHexColour(branding.accent_color) ? branding.accent_color.toLowerCase() : DEFAULT_ACCENT;
  return { primary, accent };
}

/** The stylesheet of a theme: its URL names the colours, so it can be cached as long as any asset. */
export function themeUrl(theme: { primary: string; accent: string }): string {
  return `${ANALYTICS_THEME_PATH}?${new URLSearchParams({ primary: theme.primary.slice(1), accent: theme.accent.slice(1) })}`;
}

/** The theme stylesheet's text: custom properties and the branded band, from two validated colours. */
export function themeCss(theme: { primary: string; accent: string }): string {
  const brand = readableOnWhite(theme.primary);
  return `.branded { --brand: ${brand}; --brand-ink: #ffffff; --accent: ${theme.accent}; }
.branded .brand-band { background: ${theme.primary}; color: ${inkOn(theme.primary)}; border-bottom: 4px solid ${theme.accent}; }
.branded .brand-band a { color: ${inkOn(theme.primary)}; }
.branded .kpi strong { color: ${brand}; }
`;
}

/** The page's CSP, with the institution's logo's origin among the image sources (its logo is the only image from elsewhere). */
export function cspWithLogo(nonce: string, logoUrl: string | null): string {
  const base = contentSecurityPolicy(nonce);
  if (!logoUrl) return base;
  let origin: string;
  try {
    const url = new URL(logoUrl);
    if (url.protocol !== "https:") return base;
    origin = url.origin;
  } catch {
    return base;
  }
  return base.replace("img-src 'self' data:", `img-src 'self' data: ${origin}`);
}
