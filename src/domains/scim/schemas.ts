import { z } from "@hono/zod-openapi";
import { pageSchema } from "../../platform/http/pagination";

export const InstitutionParams = z.object({
  id: z.string().openapi({ param: { name: "id", in: "path" }, example: "ins_acme" }),
});

export const ScimTokenParams = z.object({
  id: z.string().openapi({ param: { name: "id", in: "path" }, example: "ins_acme" }),
  token: z
    .string()
    .openapi({ param: { name: "token", in: "path" }, example: "sct_01JD3Z8Q4W5V6B7N8M9K0J1H2G" }),
});

export const CreateScimTokenBody = z
  .strictObject({
    name: z.string().trim().min(1).max(100).default("SCIM").openapi({
      description: "What you call it, to recognise it in the list (e.g. `Okta`).",
      example: "Okta",
    }),
  })
  .openapi("CreateScimToken");

export const ScimTokenSchema = z
  .object({
    id: z.string().openapi({ example: "sct_01JD3Z8Q4W5V6B7N8M9K0J1H2G" }),
    name: z.string().openapi({ example: "Okta" }),
    prefix: z.string().openapi({
      description: "The token's first characters, to recognise it; never enough to use it.",
      example: "scim_AbC123",
    }),
    created_at: z.string().openapi({ format: "date-time", example: "2026-11-21T09:30:00Z" }),
    last_used_at: z
      .string()
      .nullable()
      .openapi({ format: "date-time", description: "The last SCIM request made with it (to the minute)." }),
  })
  .openapi("ScimToken");

export const CreatedScimTokenSchema = ScimTokenSchema.extend({
  token: z.string().openapi({
    description:
      "The bearer token to give the identity provider: shown in this response only (only its SHA-256 is stored).",
    example: "scim_q7bQ0u1oZ3r8vB9m2Jx5cH4wY6tN1aK0sD3fG5hJ7kL",
  }),
  scim_base_url: z.string().url().openapi({
    description: "The SCIM base URL to enter in the identity provider (the tenant URL in Entra).",
    example: "https://api.lingua.example/scim/v2",
  }),
}).openapi("CreatedScimToken");

export const ScimTokenPageSchema = pageSchema(ScimTokenSchema, "ScimTokenPage");

export const ScimSettingsSchema = z
  .object({
    scim_base_url: z.string().url().openapi({
      description: "The SCIM base URL to enter in the identity provider.",
      example: "https://api.lingua.example/scim/v2",
    }),
    department_as_group: z.boolean().openapi({
      description:
        "Whether the enterprise extension's `department` of a SCIM user becomes one of the member's groups (named as the department; a new department replaces the previous one's group).",
    }),
    active_tokens: z.number().int().openapi({ description: "SCIM tokens not revoked." }),
  })
  .openapi("ScimSettings");

export const PutScimSettingsBody = z
  .strictObject({
    department_as_group: z.boolean().openapi({
      description: "Turn the department-to-group mapping on or off; it applies to changes from now on.",
    }),
  })
  .openapi("PutScimSettings");
