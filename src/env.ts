/**
 * The bindings of wrangler.toml, generated into worker-configuration.d.ts by `wrangler types`
 * (`npm run typecheck` fails when it is stale). Secrets: ENCRYPTION_KEY (32 random bytes, base64).
 */
export type Env = Cloudflare.Env;

/**
 * Hono's environment of every app of this worker. The request variables are typed where they are
 * set, in Hono's `ContextVariableMap`: `requestId` by platform/http/middleware.ts, `principal` by
 * platform/auth/middleware.ts — so that this file, which every layer imports, imports none of them.
 */
export interface AppEnv {
  Bindings: Env;
}
