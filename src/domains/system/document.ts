import { OpenAPIRegistry, OpenApiGeneratorV31 } from "@asteasolutions/zod-to-openapi";
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import type { Hono } from "hono";
import type { AppEnv } from "../../env";
import { documentedDefinitions, jsonResponse } from "../../platform/openapi";
import { errorResponses } from "../../platform/openapi-problems";
import { apiDescription } from "./api-description";
import { HEALTHZ, OPENAPI_DOCUMENT } from "./prefixes";

export const API_VERSION = "0.1.0";

/**
 * Every tag an operation uses, in the order the reference page lists them (test/system/openapi-conformance.test.ts
 * holds the two together: a tag used but not declared would be listed after System).
 */
const API_TAGS = [
  { name: "Authentication", description: "Sign-in and the caller's identity." },
  { name: "Tokens", description: "API tokens with abilities." },
  { name: "Content", description: "Courses, lessons, training blocks and training items." },
  { name: "Catalog", description: "The public course catalogue: no token, cached at the edge." },
  {
    name: "Progress",
    description: "Recording learning activity; progress, history, CEFR report and insights.",
  },
  { name: "Gamification", description: "XP, streaks, achievements and leaderboards." },
  { name: "Statistics", description: "Platform-wide statistics." },
  {
    name: "Webhooks",
    description: "Signed event deliveries: subscriptions, delivery log, redelivery, secret rotation.",
  },
  {
    name: "Events",
    description: "The institution's domain events of the last 30 days, to reconcile what a webhook missed.",
  },
  {
    name: "Exports",
    description: "Asynchronous CSV exports of an institution's learner progress, completions and activity.",
  },
  {
    name: "Institutions",
    description:
      "The institution itself: its settings, white-label analytics, compliance documents, SSO and e-mail domains.",
  },
  {
    name: "Members",
    description: "An institution's members: one at a time, by CSV bulk upload, and their invitations.",
  },
  {
    name: "LTI",
    description:
      "LTI 1.3: platform registrations, the browser launch (login and callback), launches and grade passback.",
  },
  {
    name: "xAPI",
    description:
      "xAPI forwarding: the institution's Learning Record Stores, their connection test and forwarding log.",
  },
  {
    name: "Billing",
    description:
      "Plans and prices, Stripe checkout and billing portal sessions, promotion codes, the subscription and the trial.",
  },
  { name: "System", description: "Health and this document." },
];

// The system group's own operations, served by plain Hono routes (see ./index.ts) and described here.
const healthzRoute = createRoute({
  method: "get",
  path: HEALTHZ,
  tags: ["System"],
  operationId: "healthz",
  summary: "Liveness",
  description: "Answers without touching the database or any Durable Object.",
  security: [],
  responses: {
    200: jsonResponse(z.object({ status: z.literal("ok") }).openapi("Health"), "The worker is up."),
  },
});

const openApiRoute = createRoute({
  method: "get",
  path: OPENAPI_DOCUMENT,
  tags: ["System"],
  operationId: "getOpenApiDocument",
  summary: "This OpenAPI 3.1 document",
  description: "Limited per client IP, with the public catalogue.",
  security: [],
  responses: {
    200: jsonResponse(z.record(z.string(), z.unknown()), "The OpenAPI document."),
    429: errorResponses[429],
  },
});

/**
 * The document's `servers`: the API answers where this document is served, so a relative URL is true
 * for every deployment (production, a preview, `wrangler dev`) and "Try it" calls the same origin.
 */
const SERVERS = [{ url: "/", description: "The origin that serves this document." }];

/** The whole document: the given route groups' registered operations, schemas and webhooks, in their order. */
export function buildDocument(groupApps: readonly Hono<AppEnv>[]): Record<string, unknown> {
  const shared = new OpenAPIRegistry();
  shared.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "A session token from sign-in or an API token (`lng_…`).",
  });
  shared.registerPath(healthzRoute);
  shared.registerPath(openApiRoute);
  const registries = groupApps.flatMap((app) => (app instanceof OpenAPIHono ? [app.openAPIRegistry] : []));
  return new OpenApiGeneratorV31(documentedDefinitions([shared, ...registries])).generateDocument({
    openapi: "3.1.0",
    info: { title: "Lingua API", version: API_VERSION, description: apiDescription() },
    servers: SERVERS,
    tags: API_TAGS,
  }) as unknown as Record<string, unknown>;
}
