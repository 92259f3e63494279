/** The variables development sets, each as the line .dev.vars gets when it lacks the variable. */
export function devVarLines(): Record<string, string>;
/** The lines to append to a .dev.vars holding `existing`: those of the variables it does not set. */
export function devVarsAdditions(existing: string): string[];
/** The values of a .dev.vars text (`NAME="value"` or `NAME=value` lines). */
export function parseDevVars(text: string): Record<string, string>;
/** "stripe" when the .dev.vars values set their own STRIPE_SECRET_KEY without STRIPE_API_BASE, else "stand-in". */
export function stripeMode(vars: Record<string, string>): "stripe" | "stand-in";
