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

/** What a sign-in answers (password or SSO code): the session token, its expiry and the user. */
export function presentSignIn(session: {
  token: string;
  tokenId: string;
  expiresAt: string;
  user: Principal["user"] & { institutionId: string | null };
}) {
  return {
    token: session.token,
    token_type: "Bearer" as const,
    token_id: session.tokenId,
    expires_at: session.expiresAt,
    user: presentUser(session.user),
  };
}
