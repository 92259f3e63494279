// The packages the workerd tests load pre-bundled (vitest.config.ts, `deps.optimizer.ssr`).
//
// In the test pool every module a file loads is fetched from Vite one at a time over the runner's
// WebSocket, in every file's own workerd: unbundled, the worker's dependencies are some 750 modules
// (stripe, drizzle-orm and zod over 400 of them). Pre-bundled, each import below is one module, plus
// the few chunks they share.
//
// The list is every import of a runtime dependency (package.json `dependencies`) written in src/ or
// in the workerd tests, subpaths included: a subpath left out would load unbundled beside a bundled
// copy of the same code, two instances of one library (zod's registry, asn1-schema's storage). Hono
// stays unbundled (and external to the bundles): Vitest never pre-bundles a JSX runtime, and
// hono/jsx's runtime imports hono's own modules.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Kept out of the bundles (they import it as a package), so that everything shares one copy. */
export const UNBUNDLED_DEPENDENCIES = ["hono"];

/** `zod/v4/locales/en.js` → `zod`, `@hono/zod-openapi` → `@hono/zod-openapi`. */
function packageOf(specifier) {
  const parts = specifier.split("/");
  return (specifier.startsWith("@") ? parts.slice(0, 2) : parts.slice(0, 1)).join("/");
}

/** The bare specifiers of runtime dependencies imported by src/ and test/ (not test/e2e/), sorted. */
export function prebundledDependencies(root) {
  const { dependencies } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const specifiers = new Set();
  for (const dir of ["src", "test"]) {
    for (const file of readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })) {
      if (!/\.tsx?$/.test(file) || file.startsWith("e2e")) continue;
      const text = readFileSync(join(root, dir, file), "utf8");
      // Static imports and re-exports (`from "x"`) and dynamic imports (`import("x")`).
      for (const [, specifier] of text.matchAll(/(?:\bfrom|\bimport\s*\()\s*"([^"./][^"]*)"/g)) {
        const name = packageOf(specifier);
        if (name in dependencies && !UNBUNDLED_DEPENDENCIES.includes(name)) specifiers.add(specifier);
      }
    }
  }
  return [...specifiers].sort();
}
