import type { Context } from "hono";
import type { AppEnv } from "../env";
import { ApiError, type FieldError } from "../platform/errors";

/** The posted form, every field as a list (checkboxes repeat their name). Parsed once per request. */
export async function formOf(c: Context<AppEnv>): Promise<Record<string, string[]>> {
  const body = await c.req.parseBody({ all: true });
  const out: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(body)) {
    const values = Array.isArray(value) ? value : [value];
    out[name] = values.filter((v): v is string => typeof v === "string");
  }
  return out;
}

/** A single text field of a posted form ("" when absent). */
export function field(form: Record<string, string[]>, name: string): string {
  return form[name]?.[0] ?? "";
}

/** A page number from the query: 1 unless it is a whole number of at least 1. */
export function pageNumber(value: string | undefined): number {
  const page = Number(value);
  return Number.isSafeInteger(page) && page >= 1 ? page : 1;
}

/**
 * The messages of a service's or schema's validation errors, each named by the form's label for its
 * field (`labels`), so the person reads "Name: must not be empty" rather than a JSON path.
 */
export function fieldMessages(errors: readonly FieldError[], labels: Record<string, string>): string[] {
  return errors.map((e) => {
    // The field's own label (`auth.password`) when the form has one, else its top-level field's.
    const key = e.path.split(".")[0] ?? "";
    return `${labels[e.path] ?? labels[key] ?? (key || "Form")}: ${e.message}`;
  });
}

/**
 * A service's refusal (4xx) of a form, as the form's messages named by `labels`, and its status;
 * null for anything else, which is left to the error page.
 */
export function formRefusal(
  error: unknown,
  labels: Record<string, string>,
): { messages: string[]; status: number } | null {
  if (!(error instanceof ApiError) || error.status >= 500) return null;
  return {
    messages: error.errors ? fieldMessages(error.errors, labels) : [error.message],
    status: error.status,
  };
}

/** zod issues as field errors. */
export function issuesOf(issues: readonly { path: readonly PropertyKey[]; message: string }[]): FieldError[] {
  return issues.map((i) => ({ path: i.path.map(String).join("."), message: i.message }));
}
