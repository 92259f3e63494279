import type { Config } from "../../platform/config";

/** EXPORT_* of wrangler.toml (the tests override some in vitest.config.ts), parsed by platform/config. */
export type ExportSettings = Config["exports"];

/** R2 refuses a multipart upload with more parts. */
export const MAX_PARTS = 10_000;
