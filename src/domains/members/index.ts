import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerBulkRoutes } from "./bulk/routes/bulk";
import { registerMemberRoutes } from "./routes/members";

/**
 * An institution's members, their invitations and bulk provisioning. Bulk routes come before the
 * member routes: `/members/bulk` is not a member id.
 */
export function registerMembers(app: OpenAPIHono<AppEnv>) {
  registerBulkRoutes(app);
  registerMemberRoutes(app);
}
