import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerDownloadRejectedRows } from "./bulk/routes/download-rejected-rows";
import { registerGetBulkUpload } from "./bulk/routes/get-bulk-upload";
import { registerReissueBulkInvitations } from "./bulk/routes/reissue-invitations";
import { registerUploadMembers } from "./bulk/routes/upload-members";
import { registerCreateMember } from "./routes/create-member";
import { registerGetMember } from "./routes/get-member";
import { registerListMembers } from "./routes/list-members";
import { registerReinviteMember } from "./routes/reinvite-member";
import { registerRemoveMember } from "./routes/remove-member";
import { registerUpdateMember } from "./routes/update-member";

/**
 * An institution's members, their invitations and bulk provisioning (loaded in the institutions
 * route group: their paths are below `/api/institutions/{id}`). Bulk routes come before the member
 * routes: `/members/bulk` is not a member id.
 */
export function registerMembers(app: OpenAPIHono<AppEnv>) {
  registerUploadMembers(app);
  registerGetBulkUpload(app);
  registerDownloadRejectedRows(app);
  registerReissueBulkInvitations(app);
  registerListMembers(app);
  registerCreateMember(app);
  registerGetMember(app);
  registerUpdateMember(app);
  registerReinviteMember(app);
  registerRemoveMember(app);
}
