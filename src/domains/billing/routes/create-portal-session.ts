import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonBody, jsonResponse, tokenRoute } from "../../../platform/openapi";
import { errorResponses, ProblemSchema } from "../../../platform/openapi-problems";
import { createPortalSession } from "../portal";
import { BILLING } from "../prefixes";
import { CreatePortalSessionBody, PortalSessionSchema } from "../schemas";

export const createPortalSessionRoute = tokenRoute("billing:write", {
  method: "post",
  path: `${BILLING}/portal-session`,
  tags: ["Billing"],
  operationId: "createPortalSession",
  summary: "Open the billing portal",
  description: `Opens Stripe's billing portal for your institution: its invoices and payment methods, and changing or cancelling
the subscription. Send the browser to \`url\` at once: it signs the customer in to Stripe, is good for a few minutes
(\`expires_at\`), and Lingua neither stores nor logs it. For the same reason this operation takes no \`Idempotency-Key\`
(a replay would be a stored copy of the URL); opening a second session is harmless. \`return_url\` must be an https URL
on an origin the deployment allows.`,
  request: { body: jsonBody(CreatePortalSessionBody) },
  responses: {
    201: jsonResponse(PortalSessionSchema, "The portal session: send the customer to `url`."),
    409: {
      ...errorResponses[409],
      description:
        "`no_billing_account`: the institution has no Stripe customer yet (it never started a checkout).",
    },
    502: {
      description: "`billing_provider_error`: Stripe failed or could not be reached.",
      content: { "application/problem+json": { schema: ProblemSchema } },
    },
    503: {
      description: "`billing_not_configured`: the deployment has no Stripe key or redirect origin.",
      content: { "application/problem+json": { schema: ProblemSchema } },
    },
  },
});

export function registerCreatePortalSession(app: OpenAPIHono<AppEnv>) {
  app.openapi(createPortalSessionRoute, async (c) => {
    const session = await createPortalSession(principalContext(c), c.req.valid("json"));
    c.header("Cache-Control", "no-store");
    return c.json(session, 201);
  });
}
