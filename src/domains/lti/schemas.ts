import { z } from "@hono/zod-openapi";

/**
 * What the LTI domain's parts share on the wire: the path parameters naming a registration (`id`)
 * and a launch (`launch`), and the longest URL a field may hold. Each part's own shapes are in its
 * folder: `registrations/schemas.ts`, `launch/schemas.ts`, `grades/passback-schemas.ts` and
 * `grades/line-item-schemas.ts`, `deep-linking/schemas.ts`, `roster/schemas.ts`.
 */

export const MAX_URL = 2048;

export const IdParam = z.object({
  id: z
    .string()
    .min(1)
    .openapi({ param: { name: "id", in: "path" }, example: "ltc_01JD3Q8W2X4Y5Z6A7B8C9D0E1H" }),
});

export const LaunchParam = z.object({
  launch: z
    .string()
    .min(1)
    .openapi({ param: { name: "launch", in: "path" }, example: "lti_01JD3Q8W2X4Y5Z6A7B8C9D0E1K" }),
});
