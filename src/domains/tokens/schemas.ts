import { z } from "@hono/zod-openapi";
import { ABILITIES, ALL_ABILITIES, WILDCARD } from "../../platform/auth/abilities";
import { DATE_TIME_BOUNDS_NOTE, dateTime } from "../../platform/dates";
import { pageQueryShape, pageSchema } from "../../platform/http/pagination";
import { displayText } from "../../platform/text";

const abilityList = ALL_ABILITIES.map((a) => `- \`${a}\`: ${ABILITIES[a]}`).join("\n");

export const AbilityName = z
  .string()
  .refine((value) => value === WILDCARD || Object.hasOwn(ABILITIES, value), {
    message: "is not a known ability",
  })
  .openapi({
    example: "content:read",
    description: `An ability name, or \`*\` for everything the owner's role allows.\n\n${abilityList}`,
  });

export const TokenSchema = z
  .object({
    id: z.string().openapi({ example: "tok_01JD3Q8W2X4Y5Z6A7B8C9D0E1F" }),
    name: z.string().openapi({ example: "HR sync" }),
    kind: z
      .enum(["api", "session"])
      .openapi({ description: "`api` tokens are created here; `session` tokens by sign-in." }),
    abilities: z.array(z.string()).openapi({
      example: ["content:read", "progress:read"],
      description:
        "What the token was granted, as created: `*` (every session, and any token created with it) stands for every ability the owner's role allows at each request; an ability the owner's role no longer allows stays listed but grants nothing. `GET /api/auth/me` shows the same list, and beside it `effective_abilities`, what the token may do now.",
    }),
    prefix: z.string().openapi({
      example: "lng_Ab3dE9",
      description: "The first characters of the token, to recognise it. Not a secret.",
    }),
    user_id: z.string(),
    created_at: z.string().openapi({ example: "2026-11-21T09:30:00Z" }),
    last_used_at: z.string().nullable().openapi({ description: "Updated at most once a minute." }),
    expires_at: z.string().nullable(),
  })
  .openapi("Token");

export const CreatedTokenSchema = TokenSchema.extend({
  token: z.string().openapi({
    example: "lng_Ab3dE9…",
    description: "The plain token. Shown in this response only; store it now.",
  }),
}).openapi("CreatedToken");

export const TokenPageSchema = pageSchema(TokenSchema, "TokenPage");

export const ListTokensQuery = z.object({
  ...pageQueryShape,
  kind: z.enum(["api", "session"]).optional().openapi({ description: "Only tokens of this kind." }),
});

export const CreateTokenBody = z
  .strictObject({
    name: displayText({ max: 100 }),
    abilities: z
      .array(AbilityName)
      .min(1, "must list at least one ability")
      .max(ALL_ABILITIES.length + 1),
    expires_at: dateTime()
      .nullable()
      .optional()
      .openapi({
        description: `When the token stops working; omit or null for no expiry. Must be in the future. ${DATE_TIME_BOUNDS_NOTE}`,
      }),
  })
  .openapi("CreateTokenRequest");

export const TokenIdParam = z.object({
  token: z
    .string()
    .min(1)
    .openapi({ param: { name: "token", in: "path" }, example: "tok_01JD3Q8W2X4Y5Z6A7B8C9D0E1F" }),
});
