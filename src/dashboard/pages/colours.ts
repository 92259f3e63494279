/**
 * Colour arithmetic for the institution's branding: the charts' tints, the text colour that reads on
 * a brand colour, and the WCAG contrast ratio the settings page warns about. Colours are `#rrggbb`
 * (the only form the institutions API accepts).
 */

export const DEFAULT_PRIMARY = "#3730a3";
export const DEFAULT_ACCENT = "#d97706";
/** The contrast WCAG 2.x asks of normal text (AA); large text and graphics need 3:1. */
export const AA_TEXT = 4.5;
export const AA_GRAPHICS = 3;

const HEX = /^#[0-9a-fA-F]{6}$/;

export function isHexColour(value: string | null | undefined): value is string {
  return typeof value === "string" && HEX.test(value);
}

function channels(hex: string): [number, number, number] {
  const n = Number.parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

function toHex([r, g, b]: number[]): string {
  return `#${[r, g, b]
    .map((c) =>
      Math.round(c ?? 0)
        .toString(16)
        .padStart(2, "0"),
    )
    .join("")}`;
}

/** `hex` mixed with white: `amount` 0 is the colour itself, 1 is white. */
export function tint(hex: string, amount: number): string {
  return toHex(channels(hex).map((c) => c + (255 - c) * amount));
}

/** `hex` mixed with black: `amount` 0 is the colour itself, 1 is black. */
export function shade(hex: string, amount: number): string {
  return toHex(channels(hex).map((c) => c * (1 - amount)));
}

/** WCAG relative luminance. */
export function luminance(hex: string): number {
  const [r, g, b] = channels(hex).map((c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG contrast ratio of two colours, 1 to 21. */
export function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

/** White or near-black text, whichever reads better on `background`. */
export function inkOn(background: string): string {
  return contrast(background, "#ffffff") >= contrast(background, "#1b1f2a") ? "#ffffff" : "#1b1f2a";
}

/**
 * The colour to draw text and lines with on white: the brand colour itself when it has AA contrast
 * with white (`target`: 4.5 for text, 3 for graphics), else it darkened until it has.
 */
export function readableOnWhite(hex: string, target = AA_TEXT): string {
  let colour = hex;
  for (let step = 1; contrast(colour, "#ffffff") < target && step <= 10; step++)
    colour = shade(hex, step / 10);
  return colour;
}

/** A ramp of `n` colours from a light tint of `hex` to a dark shade of it (CEFR A1 → C2). */
export function ramp(hex: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => {
    const t = n === 1 ? 0 : i / (n - 1); // 0 … 1
    return t < 0.5 ? tint(hex, 0.75 * (1 - t * 2)) : shade(hex, 0.6 * (t - 0.5));
  });
}
