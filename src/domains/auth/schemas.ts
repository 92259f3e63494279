import { z } from "@hono/zod-openapi";
import { PLANS, ROLES } from "../../db/schema";

export const SignInBody = z
  .strictObject({
    email: z.email("must be an e-mail address").max(254).openapi({ example: "owner@acme.lingua.test" }),
    password: z.string().min(1, "must not be empty").max(1024).openapi({ example: "lingua-demo-2026" }),
  })
  .openapi("SignInRequest");

export const UserSchema = z
  .object({
    id: z.string().openapi({ example: "usr_01JD3Q8W2X4Y5Z6A7B8C9D0E1F" }),
    email: z.string(),
    name: z.string(),
    role: z.enum(ROLES),
    institution_id: z.string().nullable(),
    time_zone: z.string().openapi({ example: "Europe/Berlin" }),
  })
  .openapi("User");

export const InstitutionSummarySchema = z
  .object({ id: z.string(), slug: z.string(), name: z.string(), plan: z.enum(PLANS) })
  .openapi("InstitutionSummary");

export const SignInResponseSchema = z
  .object({
    token: z.string().openapi({ description: "Bearer token for `Authorization: Bearer …`. Shown once." }),
    token_type: z.literal("Bearer"),
    token_id: z.string().openapi({
      description:
        "Id of the session token, to revoke it (sign out) with DELETE /api/integrations/tokens/{token}.",
    }),
    expires_at: z.string().openapi({ example: "2026-12-21T09:30:00Z" }),
    user: UserSchema,
  })
  .openapi("SignInResponse");

export const MeSchema = z
  .object({
    user: UserSchema,
    institution: InstitutionSummarySchema.nullable(),
    plan: z
      .enum([...PLANS, "platform"])
      .openapi({ description: "The institution's plan; `platform` for platform staff." }),
    rate_limit: z.object({
      limit: z.number().int().openapi({ description: "Requests per rolling minute for this token." }),
      window_seconds: z.number().int(),
    }),
    token: z.object({
      id: z.string(),
      name: z.string(),
      kind: z.enum(["api", "session"]),
      abilities: z.array(z.string()).openapi({
        example: ["*"],
        description:
          "What the token was granted, exactly as `GET /api/integrations/tokens` lists it and its creation answered it: `*` (every session, and any token created with it) stands for every ability the owner's role allows at each request.",
      }),
      effective_abilities: z.array(z.string()).openapi({
        example: ["tokens:read", "tokens:write", "content:read", "progress:read", "progress:write"],
        description:
          "What this request may do: `abilities` with `*` expanded to the owner's current role and any ability the role no longer allows left out, in the catalogue's order. Check this one (`effective_abilities.includes(\"progress:read\")`).",
      }),
      expires_at: z.string().nullable(),
    }),
  })
  .openapi("Me");
