import { enforce } from "../../platform/auth/policy";
import { ApiError, validationError } from "../../platform/errors";
import type { PrincipalContext } from "../../platform/service/context";
import { callStripe, findAccount, fromUnix } from "./account";
import { configuredRedirectRules } from "./checkout";
import { billingScope, mayUseBilling } from "./policy";
import { redirectProblem } from "./redirects";
import { stripeFor } from "./stripe-client";

/**
 * Stripe does not say how long a portal session's URL may be opened, and expires an unused one after
 * a short while: we promise five minutes from its creation.
 */
export const PORTAL_URL_LIFETIME_SECONDS = 5 * 60;

/**
 * A Stripe billing portal session for the institution's customer. Its URL signs the customer in to
 * Stripe, so it is handed to the caller and nothing else: never logged, never stored (this operation
 * takes no Idempotency-Key, whose replays are stored responses; opening a second session is harmless).
 */
export async function createPortalSession(
  ctx: PrincipalContext,
  input: { return_url: string },
): Promise<{ url: string; expires_at: string }> {
  enforce(mayUseBilling(ctx.principal));
  const { institutionId } = billingScope(ctx.principal);
  const problem = redirectProblem(input.return_url, "return_url", configuredRedirectRules(ctx));
  if (problem) throw validationError([problem]);
  const account = await findAccount(ctx, institutionId);
  if (!account)
    throw new ApiError(
      "no_billing_account",
      "The institution has no billing account yet; start a subscription with POST /api/billing/checkout-session.",
    );
  const stripe = await stripeFor(ctx);
  const session = await callStripe("open the billing portal", () =>
    stripe.billingPortal.sessions.create({
      customer: account.stripeCustomerId,
      return_url: input.return_url,
    }),
  );
  return { url: session.url, expires_at: fromUnix(session.created + PORTAL_URL_LIFETIME_SECONDS) as string };
}
