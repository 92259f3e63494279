import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { jsonBody, jsonResponse, publicRoute } from "../../../platform/openapi";
import { errorResponses, institutionMovingResponse } from "../../../platform/openapi-problems";
import { limitByIp } from "../../../platform/ratelimit/middleware";
import { IP_POLICIES } from "../../../platform/ratelimit/policies";
import { acceptInvitation } from "../../members/invitations";
import { AcceptInvitationBody } from "../../members/schemas";
import { AUTH } from "../prefixes";
import { presentUser } from "../present";
import { SignInResponseSchema } from "../schemas";
import { createSession } from "../service";

export const acceptInvitationRoute = publicRoute(
  {
    method: "post",
    path: `${AUTH}/accept-invitation`,
    tags: ["Authentication"],
    operationId: "acceptInvitation",
    summary: "Accept an invitation and set a password",
    description: `An invited member sets their password with the \`token\` of the \`invitation_url\` they were sent, becomes \`active\`, and is signed in: the answer is the same as sign-in's. An invitation works once and for 7 days; an unknown, used or expired one is \`400 invalid_invitation\`. Limited to ${IP_POLICIES.signIn.limit} attempts per client IP per minute, with sign-in.`,
    middleware: [limitByIp(IP_POLICIES.signIn)],
    request: { body: jsonBody(AcceptInvitationBody) },
    responses: {
      503: institutionMovingResponse,
      200: jsonResponse(SignInResponseSchema, "Password set; signed in."),
      400: { ...errorResponses[400], description: "`invalid_invitation`, or malformed JSON." },
      409: {
        ...errorResponses[409],
        description: "`conflict`: the member kept changing while the invitation was accepted; send it again.",
      },
    },
  },
  { countedPerIp: true },
);

export function registerAcceptInvitation(app: OpenAPIHono<AppEnv>) {
  app.openapi(acceptInvitationRoute, async (c) => {
    const { token, password } = c.req.valid("json");
    const user = await acceptInvitation(c.get("ctx"), { token, password });
    const session = await createSession(c.get("ctx"), user);
    c.header("Cache-Control", "no-store");
    return c.json(
      {
        token: session.token,
        token_type: "Bearer" as const,
        token_id: session.tokenId,
        expires_at: session.expiresAt,
        user: presentUser(user),
      },
      200,
    );
  });
}
