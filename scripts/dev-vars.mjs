// The local values `npm run dev` (scripts/dev.mjs) writes to .dev.vars, the git-ignored file whose
// values override wrangler.toml's [vars] under `wrangler dev`. Each line is added only when the file
// does not set its variable yet, so a developer's own values are kept.
import { randomBytes } from "node:crypto";

/** The variables development sets, each as the line .dev.vars gets when it lacks the variable. */
export function devVarLines() {
  return {
    ENCRYPTION_KEY: `ENCRYPTION_KEY="${randomBytes(32).toString("base64")}"`,
    // Webhooks and other outbound URLs may point at http:// and loopback on this machine.
    ALLOW_LOOPBACK_TARGETS: `ALLOW_LOOPBACK_TARGETS="true"`,
    // wrangler.toml's resolver is Cloudflare's public one: development never asks it (and judges
    // host names by their text); point this at a loopback DNS-over-HTTPS stub to try the check.
    OUTBOUND_DOH_URL: `OUTBOUND_DOH_URL="off"`,
  };
}

/** The lines to append to a .dev.vars holding `existing`: those of the variables it does not set. */
export function devVarsAdditions(existing) {
  return Object.entries(devVarLines())
    .filter(([name]) => !new RegExp(`^${name}=`, "m").test(existing))
    .map(([, line]) => line);
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
