#!/usr/bin/env node
// The files Workers Static Assets serves beside the worker (wrangler.toml [assets]), copied from
// node_modules so that none is committed: the API reference page's script, Scalar's standalone bundle.
// Run by wrangler before `wrangler dev` and `wrangler deploy` ([build] command), and by vitest.config.ts.
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The directory wrangler.toml's [assets] serves. */
export const ASSETS_DIR = join(root, ".assets");

/** Where the reference page finds Scalar; src/domains/system/docs-page.ts names the same path. */
export const SCALAR_ASSET_PATH = "/api/docs/scalar-api-reference.js";

export function buildAssets() {
  // A direct devDependency (only this bundle is used), so npm installs it at the top of node_modules;
  // its exports map names no bundle.
  const scalarPackage = join(root, "node_modules", "@scalar", "api-reference");
  const target = join(ASSETS_DIR, ...SCALAR_ASSET_PATH.split("/"));
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(join(scalarPackage, "dist", "browser", "standalone.js"), target);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) buildAssets();
