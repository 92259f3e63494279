import type { Principal } from "./platform/auth/principal";

/**
 * The bindings of wrangler.toml, generated into worker-configuration.d.ts by `wrangler types`
 * (`npm run typecheck` fails when it is stale). Secrets: ENCRYPTION_KEY (32 random bytes, base64).
 */
export type Env = Cloudflare.Env;

export interface Variables {
  requestId: string;
  principal: Principal;
}

export interface AppEnv {
  Bindings: Env;
  Variables: Variables;
}
