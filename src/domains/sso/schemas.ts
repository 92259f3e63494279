import { z } from "@hono/zod-openapi";
import { SSO_SIGN_IN_STATUSES, SSO_TYPES } from "../../db/schema";
import { pageQueryShape, pageSchema } from "../../platform/http/pagination";
import { SSO_REFUSAL_MEANINGS, SSO_REFUSAL_REASONS } from "./refusal";

export const reasonsText = SSO_REFUSAL_REASONS.map((r) => `\`${r}\` (${SSO_REFUSAL_MEANINGS[r]})`).join("; ");

export const BeginSsoQuery = z.object({
  email: z.email("must be an e-mail address").max(254).optional().openapi({
    example: "ada@acme.edu",
    description: "The person's e-mail address: its domain finds the institution.",
  }),
  institution: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .openapi({ example: "acme", description: "The institution's slug, instead of `email`." }),
});

export const SsoRedirectSchema = z
  .object({ redirect_url: z.string().openapi({ description: "The identity provider's sign-in URL." }) })
  .openapi("SsoRedirect");

export const SsoSessionBody = z
  .strictObject({
    code: z.string().min(1).max(256).openapi({
      description:
        "The `code` of the landing page's URL fragment, whole: opaque (it begins with the institution's id).",
    }),
  })
  .openapi("SsoSessionRequest");

export const SsoLogParams = z.object({
  id: z.string().openapi({ param: { name: "id", in: "path" }, example: "ins_acme" }),
});

export const SsoLogQuery = z.object({
  ...pageQueryShape,
  status: z.enum(SSO_SIGN_IN_STATUSES).optional(),
  reason: z.enum(SSO_REFUSAL_REASONS).optional().openapi({ description: "Only refusals for this reason." }),
  user_id: z.string().optional().openapi({ description: "Only sign-ins of this member." }),
});

export const SsoSignInSchema = z
  .object({
    id: z.string().openapi({ example: "sso_01JD3Q8W2X4Y5Z6A7B8C9D0E1F" }),
    protocol: z.enum(SSO_TYPES),
    status: z.enum(SSO_SIGN_IN_STATUSES),
    reason: z
      .string()
      .nullable()
      .openapi({ description: `Why it was refused; null when it succeeded. One of: ${reasonsText}.` }),
    detail: z
      .string()
      .nullable()
      .openapi({ description: "The refusal in a sentence, for the administrator." }),
    subject: z.string().nullable().openapi({ description: "The IdP's id of the person, once known." }),
    email: z.string().nullable(),
    user_id: z.string().nullable().openapi({ description: "The member signed in (or refused), once known." }),
    provisioned: z.boolean().openapi({ description: "This sign-in created the member (just in time)." }),
    request_id: z.string().nullable(),
    created_at: z.string().openapi({ example: "2026-11-21T09:30:00Z" }),
  })
  .openapi("SsoSignIn");

export const SsoSignInPageSchema = pageSchema(SsoSignInSchema, "SsoSignInPage");
