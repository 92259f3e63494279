import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";

/** Plans, checkout and portal sessions, promotion codes, the subscription, trials and Stripe's webhook. */
export function registerBilling(_app: OpenAPIHono<AppEnv>) {}
