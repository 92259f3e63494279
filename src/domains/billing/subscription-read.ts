import { enforce } from "../../platform/auth/policy";
import type { PrincipalContext } from "../../platform/service/context";
import { findAccount, institutionForBilling } from "./account";
import { billingScope, mayUseBilling } from "./policy";
import { presentSubscription } from "./present";

/** The institution's subscription as Stripe last told us (status `none` when it never subscribed). */
export async function readSubscription(ctx: PrincipalContext) {
  enforce(mayUseBilling(ctx.principal));
  const { institutionId } = billingScope(ctx.principal);
  const [institution, account] = await Promise.all([
    institutionForBilling(ctx, institutionId),
    findAccount(ctx, institutionId),
  ]);
  return presentSubscription(institution, account);
}
