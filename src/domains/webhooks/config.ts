import type { Config } from "../../platform/config";

/** The delivery settings: WEBHOOK_* of wrangler.toml, parsed by platform/config. */
export type DeliveryConfig = Config["webhooks"];

/** Workers allow six open connections per invocation; more would only queue inside the runtime. */
export const PARALLEL_SENDS = 6;
