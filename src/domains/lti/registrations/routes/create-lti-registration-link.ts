import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { idempotencyHeaderShape, idempotent } from "../../../../platform/http/idempotency";
import { jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { LTI_CONSUMERS } from "../../prefixes";
import { createRegistrationLink } from "../dynamic/links";
import { RegistrationLinkSchema } from "../schemas";

export const createLtiRegistrationLinkRoute = tokenRoute("lti:write", {
  method: "post",
  path: `${LTI_CONSUMERS}/registration-links`,
  tags: ["LTI"],
  operationId: "createLtiRegistrationLink",
  summary: "Create a dynamic registration link",
  description:
    "A single-use URL for LTI Dynamic Registration 1.0: the LMS administrator pastes it where the LMS registers a tool by URL (Canvas: _Developer Keys → + Developer Key → + LTI Registration_; Moodle: _Manage tools → Tool URL → Add LTI Advantage_). The LMS opens it (`GET /api/lti/register`), Lingua reads the LMS's OpenID configuration, registers itself there and stores the registration in your institution with the client id and deployment id the LMS gave, its own keys and `tool` URLs — nothing to copy by hand. The URL carries no API token, only a random secret of its own (Lingua keeps its hash), is bound to the caller's institution, valid 24 hours, and makes one registration: used or expired, it is refused (`410`). A failed registration leaves it usable. Takes no body. `Idempotency-Key` honoured (the replay answers the same link).",
  middleware: [idempotent],
  request: { headers: z.object(idempotencyHeaderShape) },
  responses: {
    201: jsonResponse(RegistrationLinkSchema, "The link, shown in this response only."),
  },
});

/**
 * Registered before the `…/lti-consumers/{id}` routes: the router answers the first registered route
 * that matches. The static `registration-links` segment beside `{id}` moves the LTI group's Hono
 * from its RegExpRouter to its TrieRouter (under a microsecond a request more, on this group only),
 * as webhooks' event-types does.
 */
export function registerCreateLtiRegistrationLink(app: OpenAPIHono<AppEnv>) {
  app.openapi(createLtiRegistrationLinkRoute, async (c) => {
    const link = await createRegistrationLink(principalContext(c), { origin: new URL(c.req.url).origin });
    c.header("Cache-Control", "no-store");
    return c.json(link, 201);
  });
}
