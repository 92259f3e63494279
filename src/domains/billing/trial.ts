import { enforce } from "../../platform/auth/policy";
import type { PrincipalContext } from "../../platform/service/context";
import { findAccount, institutionForBilling } from "./account";
import { billingScope, mayUseBilling } from "./policy";
import { presentTrialStatus } from "./present";

/** The institution's trial as the webhook last left it, at the request's time. */
export async function trialStatus(ctx: PrincipalContext) {
  enforce(mayUseBilling(ctx.principal));
  const { institutionId } = billingScope(ctx.principal);
  const [institution, account] = await Promise.all([
    institutionForBilling(ctx, institutionId),
    findAccount(ctx, institutionId),
  ]);
  return presentTrialStatus(institution, account, ctx.now());
}
