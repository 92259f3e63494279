import { z } from "@hono/zod-openapi";
import { PLANS } from "../../db/schema";
import { pageQueryShape, pageSchema } from "../../platform/http/pagination";
import { cursorQueryShape } from "../../platform/http/spread-pages";
import { isDatabaseBindingName } from "../../platform/service/databases";
import { displayText, personName } from "../../platform/text";

const timestamp = z.string().openapi({ example: "2026-11-21T09:30:00Z" });

function isLocale(value: string): boolean {
  try {
    return Intl.getCanonicalLocales(value).length === 1;
  } catch {
    return false;
  }
}

function isTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

const color = z
  .string()
  .regex(/^#[0-9a-fA-F]{6}$/, "must be a colour as #rrggbb")
  .openapi({ example: "#1a73e8" });

export const BrandingSchema = z
  .object({
    display_name: z.string().nullable().openapi({ example: "Acme Academy" }),
    logo_url: z.string().nullable().openapi({ example: "https://cdn.acme.example/logo.svg" }),
    primary_color: z.string().nullable().openapi({ example: "#1a73e8" }),
    accent_color: z.string().nullable().openapi({ example: "#fbbc04" }),
  })
  .openapi("Branding", { description: "White-label settings; null where not set." });

export const BrandingInput = z
  .strictObject({
    display_name: displayText({ max: 100 }).nullable().optional(),
    logo_url: z
      .url({ protocol: /^https$/, message: "must be an https URL" })
      .max(2048)
      .nullable()
      .optional(),
    primary_color: color.nullable().optional(),
    accent_color: color.nullable().optional(),
  })
  .openapi("BrandingInput", {
    description: "Fields to set; a field set to null is cleared, a field left out is kept.",
  });

const locale = z
  .string()
  .max(35)
  .refine(isLocale, "must be a BCP 47 language tag")
  .openapi({ example: "en-GB", description: "BCP 47 language tag." });
const timeZone = z
  .string()
  .max(64)
  .refine(isTimeZone, "must be an IANA time zone")
  .openapi({ example: "Europe/Berlin", description: "IANA time zone." });
const seats = z
  .number()
  .int()
  .min(1, "must be >= 1")
  .max(10_000_000)
  .nullable()
  .openapi({ description: "Invited and active members allowed at once; null for unlimited." });
const rateLimit = z
  .number()
  .int()
  .min(1, "must be >= 1")
  .max(1_000_000)
  .nullable()
  .openapi({ description: "Enterprise only: the per-token limit per rolling minute; null for the plan's." });

export const InstitutionSchema = z
  .object({
    id: z.string().openapi({ example: "ins_01JD3Q8W2X4Y5Z6A7B8C9D0E1F" }),
    slug: z.string().openapi({ example: "acme" }),
    name: z.string().openapi({ example: "Acme Corporation" }),
    plan: z.enum(PLANS),
    rate_limit_per_minute: z
      .number()
      .int()
      .openapi({ description: "The effective per-token limit per rolling minute." }),
    seats: z.number().int().nullable().openapi({ description: "Null means unlimited." }),
    member_count: z.number().int().openapi({ description: "Members of every status." }),
    branding: BrandingSchema,
    locale: z.string().openapi({ example: "en" }),
    time_zone: z.string().openapi({ example: "UTC" }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi("Institution");

export const InstitutionPageSchema = pageSchema(InstitutionSchema, "InstitutionPage");

export const ListInstitutionsQuery = z.object({
  ...pageQueryShape,
  ...cursorQueryShape,
  q: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .openapi({ param: { name: "q", in: "query" }, description: "Name or slug contains (any case)." }),
  plan: z
    .enum(PLANS)
    .optional()
    .openapi({ param: { name: "plan", in: "query" } }),
});

export const InstitutionIdParam = z.object({
  id: z
    .string()
    .min(1)
    .openapi({ param: { name: "id", in: "path" }, example: "ins_01JD3Q8W2X4Y5Z6A7B8C9D0E1F" }),
});

const slug = z
  .string()
  .regex(
    /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/,
    "must be 1-63 lower-case letters, digits and inner hyphens",
  )
  .openapi({ example: "acme" });

/** An institution's name: a display string like every other. */
const INSTITUTION_NAME = displayText({ max: 200 });

export const CreateInstitutionBody = z
  .strictObject({
    name: INSTITUTION_NAME,
    slug: slug.optional().openapi({ description: "Derived from the name when left out." }),
    plan: z.enum(PLANS).default("free"),
    rate_limit_per_minute: rateLimit.optional(),
    seats: seats.optional(),
    branding: BrandingInput.optional(),
    locale: locale.optional().openapi({ description: "Default `en`." }),
    time_zone: timeZone.optional().openapi({ description: "Default `UTC`." }),
    admin: z
      .strictObject({
        email: z.email("must be an e-mail address").max(254),
        name: personName(),
      })
      .optional()
      .openapi({
        description:
          "Creates the first institution admin (invited) in the same step; the answer carries its `invitation_url`.",
      }),
    database: z
      .string()
      .refine(isDatabaseBindingName, "must be a D1 binding name, as wrangler.toml names it (DB_1)")
      .optional()
      .openapi({
        example: "DB_1",
        description:
          "The D1 database the institution lives in, by its binding name; one this deployment does not bind is `422`. Left out: the least full database (by the size D1 reports for each).",
      }),
  })
  .openapi("CreateInstitutionRequest");

export const UpdateInstitutionBody = z
  .strictObject({
    name: INSTITUTION_NAME.optional(),
    branding: BrandingInput.optional(),
    locale: locale.optional(),
    time_zone: timeZone.optional(),
    plan: z.enum(PLANS).optional().openapi({ description: "Platform staff only." }),
    rate_limit_per_minute: rateLimit
      .optional()
      .openapi({ description: "Platform staff only; Enterprise only." }),
    seats: seats.optional().openapi({ description: "Platform staff only." }),
  })
  .openapi("UpdateInstitutionRequest");

export const CreatedInstitutionSchema = InstitutionSchema.extend({
  admin: z
    .object({
      id: z.string(),
      invitation_url: z.url().openapi({ description: "Shown once; single-use, valid 7 days." }),
      invitation_expires_at: z.string(),
    })
    .nullable()
    .openapi({ description: "The first admin, when `admin` was sent; null otherwise." }),
  database: z.string().openapi({
    example: "DB_1",
    description:
      "The D1 database (binding name) the institution was placed in: `database` as sent, or the least full.",
  }),
}).openapi("CreatedInstitution");
