/** The nested parameters of a form-encoded text (Stripe's bracket notation: `a[b][0]=…`, `expand[]=…`). */
export function decodeForm(text: string): Record<string, unknown>;
/** Nested parameters encoded as Stripe's SDKs encode them. */
export function encodeForm(params: Record<string, unknown>): string;
