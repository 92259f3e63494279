import type { Config } from "../../platform/config";

/** The delivery settings: WEBHOOK_* of wrangler.toml, parsed by platform/config. */
export type DeliveryConfig = Config["webhooks"];
