// The local values `npm run dev` (scripts/dev.mjs) writes to .dev.vars, the git-ignored file whose
// values override wrangler.toml's [vars] under `wrangler dev`. Each line is added only when the file
// does not set its variable yet, so a developer's own values are kept.
import { randomBytes } from "node:crypto";
import { LOCAL_PORT, standInBindings } from "./stripe-standin/local.mjs";

/** The variables that point billing at the local Stripe stand-in (scripts/stripe-standin/). */
const STRIPE_STAND_IN_VARS = Object.keys(standInBindings(""));

/** The variables development sets, each as the line .dev.vars gets when it lacks the variable. */
export function devVarLines() {
  return {
    ENCRYPTION_KEY: `ENCRYPTION_KEY="${randomBytes(32).toString("base64")}"`,
    // Webhooks and other outbound URLs may point at http:// and loopback on this machine.
    ALLOW_LOOPBACK_TARGETS: `ALLOW_LOOPBACK_TARGETS="true"`,
    // wrangler.toml's resolver is Cloudflare's public one: development never asks it (and judges
    // host names by their text); point this at a loopback DNS-over-HTTPS stub to try the check.
    OUTBOUND_DOH_URL: `OUTBOUND_DOH_URL="off"`,
    // Billing against the local Stripe stand-in that `npm run dev` starts: its fixed sk_test_/whsec_
    // pair, its address and its demo prices (see stripeMode below for a developer's own keys).
    ...Object.fromEntries(
      Object.entries(standInBindings(`http://127.0.0.1:${LOCAL_PORT}`)).map(([name, value]) => [
        name,
        `${name}="${value}"`,
      ]),
    ),
    // Checkout and portal redirects may return to any loopback origin (a local front end).
    BILLING_REDIRECT_ORIGINS: `BILLING_REDIRECT_ORIGINS="http://127.0.0.1:*,http://localhost:*"`,
  };
}

/**
 * Whether billing in development talks to the stand-in or to Stripe itself: a .dev.vars that sets its
 * own STRIPE_SECRET_KEY without a STRIPE_API_BASE means the developer's real (test) keys.
 */
export function stripeMode(vars) {
  return vars.STRIPE_SECRET_KEY && !vars.STRIPE_API_BASE ? "stripe" : "stand-in";
}

/** The lines to append to a .dev.vars holding `existing`: those of the variables it does not set. */
export function devVarsAdditions(existing) {
  const ownStripe = stripeMode(parseDevVars(existing)) === "stripe";
  return (
    Object.entries(devVarLines())
      .filter(([name]) => !new RegExp(`^${name}=`, "m").test(existing))
      // With the developer's own Stripe keys, none of the stand-in's settings are added.
      .filter(([name]) => !(ownStripe && STRIPE_STAND_IN_VARS.includes(name)))
      .map(([, line]) => line)
  );
}

/** The values of a .dev.vars text (`NAME="value"` or `NAME=value` lines), for checks and tests. */
export function parseDevVars(text) {
  const vars = {};
  for (const line of text.split("\n")) {
    const match = /^([A-Z0-9_]+)=(?:"(.*)"|(.*))$/.exec(line.trim());
    if (match?.[1]) vars[match[1]] = match[2] ?? match[3] ?? "";
  }
  return vars;
}
