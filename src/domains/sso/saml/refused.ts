// Why a SAML Response was refused, as the SSO log records it (./refusals.ts says what each means).
import type { SamlRefusalReason } from "./refusals";

/** Why a Response was refused: the SSO log's reason (./refusals.ts says what each means). */
export type SamlRefusal = Exclude<
  SamlRefusalReason,
  "saml_unsolicited" | "saml_replayed" | "saml_attribute_missing"
>;

/** A refusal: `reason` for the log's filter, `detail` for the administrator reading why. */
export class SamlRefused extends Error {
  constructor(
    readonly reason: SamlRefusal,
    readonly detail: string,
  ) {
    super(detail);
    this.name = "SamlRefused";
  }
}
