import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { registerGetSamlMetadata } from "./routes/get-saml-metadata";

/** SAML's routes under `/api/institutions` (the institutions group). */
export function registerSamlInstitutionRoutes(app: OpenAPIHono<AppEnv>) {
  registerGetSamlMetadata(app);
}
