import type { Hono } from "hono";
import type { AppEnv } from "../../../env";
import { HEALTHZ } from "../prefixes";

/** Liveness: no limit, so that monitors and load balancers are never refused; loads no schema library. */
export function registerHealthz(app: Hono<AppEnv>) {
  app.get(HEALTHZ, (c) => c.json({ status: "ok" as const }, 200));
}
