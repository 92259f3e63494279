import type { Branding, Plan } from "../../db/schema";
import { validationError } from "../../platform/errors";

/**
 * The rules of an institution's settings that creating one (creation.ts) and changing one
 * (service.ts) both apply: branding is merged key by key (`null` removes a key), a rate limit of
 * its own is only for the enterprise plan, and a locale is stored in its canonical form.
 */

/** A locale (checked by the schemas) as stored: canonical (`en-us` → `en-US`). */
export function canonicalLocale(locale: string): string {
  return Intl.getCanonicalLocales(locale)[0] ?? locale;
}

export function mergeBranding(current: Branding, patch: Branding | undefined): Branding {
  if (!patch) return current;
  const merged: Branding = { ...current };
  for (const [key, value] of Object.entries(patch) as [keyof Branding, string | null | undefined][]) {
    if (value === undefined) continue;
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

export function checkRateLimitPlan(plan: Plan, rateLimit: number | null | undefined): void {
  if (rateLimit != null && plan !== "enterprise") {
    throw validationError([{ path: "rate_limit_per_minute", message: "is only for the enterprise plan" }]);
  }
}
