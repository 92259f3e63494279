import type { z } from "@hono/zod-openapi";
import type { Principal } from "../../platform/auth/principal";
import type { UserSchema } from "./schemas";

export function presentUser(
  user: Principal["user"] & { institutionId: string | null },
): z.infer<typeof UserSchema> {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    role: user.role,
    institution_id: user.institutionId,
    time_zone: user.timeZone,
  };
}
