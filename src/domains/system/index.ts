import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { cors } from "hono/cors";
import type { AppEnv } from "../../env";
import { jsonResponse } from "../../platform/openapi";
import { apiDescription } from "./api-description";
import { docsPage } from "./docs-page";

export const API_VERSION = "0.1.0";

const healthzRoute = createRoute({
  method: "get",
  path: "/healthz",
  tags: ["System"],
  operationId: "healthz",
  summary: "Liveness",
  description: "Answers without touching the database or any Durable Object.",
  security: [],
  responses: { 200: jsonResponse(z.object({ status: z.literal("ok") }).openapi("Health"), "The worker is up.") },
});

const openApiRoute = createRoute({
  method: "get",
  path: "/api/openapi.json",
  tags: ["System"],
  operationId: "getOpenApiDocument",
  summary: "This OpenAPI 3.1 document",
  security: [],
  middleware: [cors({ origin: "*", allowMethods: ["GET"] })],
  responses: { 200: jsonResponse(z.record(z.string(), z.unknown()), "The OpenAPI document.") },
});

export function registerSystem(app: OpenAPIHono<AppEnv>) {
  app.openapi(healthzRoute, (c) => c.json({ status: "ok" as const }, 200));

  // Built on first request, not at module load: start-up stays as fast as a bare worker.
  let document: Record<string, unknown> | null = null;
  app.openapi(openApiRoute, (c) => {
    document ??= app.getOpenAPI31Document({
      openapi: "3.1.0",
      info: { title: "Lingua API", version: API_VERSION, description: apiDescription() },
      tags: [
        { name: "Authentication", description: "Sign-in and the caller's identity." },
        { name: "Tokens", description: "API tokens with abilities." },
        { name: "Content", description: "Courses, lessons, training blocks and training items." },
        { name: "Catalog", description: "The public course catalogue: no token, cached at the edge." },
        { name: "Progress", description: "Recording learning activity; progress, history, CEFR report and insights." },
        { name: "Gamification", description: "XP, streaks, achievements and leaderboards." },
        { name: "Statistics", description: "Platform-wide statistics." },
        { name: "Webhooks", description: "Signed event deliveries: subscriptions, delivery log, redelivery, secret rotation." },
        { name: "Events", description: "The institution's domain events of the last 30 days, to reconcile what a webhook missed." },
        { name: "Exports", description: "Asynchronous CSV exports of an institution's learner progress, completions and activity." },
        { name: "System", description: "Health and this document." },
      ],
    }) as unknown as Record<string, unknown>;
    c.header("Cache-Control", "public, max-age=300");
    return c.json(document, 200);
  });

  app.get("/api/docs", docsPage);
}
