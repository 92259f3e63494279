import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { TRIAL } from "../prefixes";
import { TrialStatusSchema } from "../schemas";
import { trialStatus } from "../trial";

export const getTrialStatusRoute = tokenRoute("billing:read", {
  method: "get",
  path: `${TRIAL}/status`,
  tags: ["Billing"],
  operationId: "getTrialStatus",
  summary: "Read the trial's status",
  description: `Whether your institution is on its free trial, until when, how many days are left (rounded up), and what happens at
its end: \`subscription_starts\` when a payment method is on file and the subscription is not set to cancel, else
\`downgrade_to_free\`. An institution that never had a trial answers \`on_trial: false\` with nulls.`,
  responses: { 200: jsonResponse(TrialStatusSchema, "The trial's status.") },
});

export function registerGetTrialStatus(app: OpenAPIHono<AppEnv>) {
  app.openapi(getTrialStatusRoute, async (c) => c.json(await trialStatus(principalContext(c)), 200));
}
