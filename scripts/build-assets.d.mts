/** The directory wrangler.toml's [assets] serves. */
export const ASSETS_DIR: string;
/** Where the reference page finds Scalar's standalone bundle. */
export const SCALAR_ASSET_PATH: string;
/** Copies the static assets from node_modules into ASSETS_DIR. */
export function buildAssets(): void;
