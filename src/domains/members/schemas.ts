import { z } from "@hono/zod-openapi";
import { MEMBER_STATUSES } from "../../db/schema";
import { pageQueryShape, pageSchema } from "../../platform/http/pagination";
import { externalId, groupName, personName } from "../../platform/text";
import { MEMBER_ROLES } from "./policy";

const timestamp = z.string().openapi({ example: "2026-11-21T09:30:00Z" });

export const MemberRoleSchema = z.enum(MEMBER_ROLES).openapi({
  description: "`institution_admin` > `instructor` > `learner`; nobody grants a role above their own.",
});
export const MemberStatusSchema = z.enum(MEMBER_STATUSES).openapi({
  description:
    "`invited`: created, has not set a password yet (SSO members may stay so); `active`; `suspended`: cannot sign in, every token revoked. Invited and active members take a seat.",
});

export const MAX_GROUPS = 50;
const groups = z
  .array(groupName())
  .max(MAX_GROUPS, `must list at most ${MAX_GROUPS} groups`)
  .openapi({ example: ["class-7b", "french"], description: "Classes, departments: free-form names." });
const externalIdInput = externalId("Your SIS/HR id, unique within the institution.").nullable();

export const MemberSchema = z
  .object({
    id: z.string().openapi({ example: "usr_01JD3Q8W2X4Y5Z6A7B8C9D0E1F", description: "The user id." }),
    email: z.string().openapi({ example: "ana@acme.example" }),
    name: z.string().openapi({ example: "Ana Lima" }),
    role: MemberRoleSchema,
    status: MemberStatusSchema,
    external_id: z.string().nullable(),
    groups: z.array(z.string()).openapi({ description: "In alphabetical order." }),
    created_at: timestamp,
    updated_at: timestamp,
    last_active_at: z
      .string()
      .nullable()
      .openapi({ description: "Last authenticated request (minute precision); null if never." }),
  })
  .openapi("Member");

export const CreatedMemberSchema = MemberSchema.extend({
  invitation_url: z.url().openapi({
    description:
      "Shown once: a page of the admin dashboard (`/dashboard/accept-invitation`) where the member chooses a password in the browser; an app of your own may instead send the URL's `token` query parameter with a password to `POST /api/auth/accept-invitation`. Single-use, valid 7 days. Send it through your own channel.",
    example:
      "https://api.lingua.example/dashboard/accept-invitation?token=inv_3q2-7wEzVfT1mXQx0cO5bq8n4sYjK2dLr9uGhPaAe6w",
  }),
  invitation_expires_at: timestamp,
}).openapi("CreatedMember");

export const MemberPageSchema = pageSchema(MemberSchema, "MemberPage");

export const MEMBER_SORTS = [
  "name",
  "-name",
  "created_at",
  "-created_at",
  "last_active_at",
  "-last_active_at",
] as const;
export type MemberSort = (typeof MEMBER_SORTS)[number];

export const ListMembersQuery = z.object({
  ...pageQueryShape,
  role: MemberRoleSchema.optional().openapi({ param: { name: "role", in: "query" } }),
  status: MemberStatusSchema.optional().openapi({ param: { name: "status", in: "query" } }),
  group: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .openapi({ param: { name: "group", in: "query" }, description: "Only members of this group." }),
  external_id: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .openapi({ param: { name: "external_id", in: "query" } }),
  q: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .openapi({ param: { name: "q", in: "query" }, description: "Name or e-mail contains (any case)." }),
  sort: z
    .enum(MEMBER_SORTS)
    .default("name")
    .openapi({
      param: { name: "sort", in: "query" },
      description:
        "`name` (default), `created_at` or `last_active_at`, `-` for descending; ties by id. Members never active sort last.",
    }),
});

/** The institution whose members a path names (the same parameter as institutions' own paths). */
export const InstitutionIdParam = z.object({
  id: z
    .string()
    .min(1)
    .openapi({ param: { name: "id", in: "path" }, example: "ins_01JD3Q8W2X4Y5Z6A7B8C9D0E1F" }),
});

export const MemberParams = z.object({
  id: z
    .string()
    .min(1)
    .openapi({ param: { name: "id", in: "path" }, example: "ins_01JD3Q8W2X4Y5Z6A7B8C9D0E1F" }),
  member: z
    .string()
    .min(1)
    .openapi({ param: { name: "member", in: "path" }, example: "usr_01JD3Q8W2X4Y5Z6A7B8C9D0E1F" }),
});

export const CreateMemberBody = z
  .strictObject({
    email: z.email("must be an e-mail address").max(254),
    name: personName(),
    role: MemberRoleSchema.default("learner"),
    external_id: externalIdInput.optional(),
    groups: groups.optional(),
  })
  .openapi("CreateMemberRequest");

export const UpdateMemberBody = z
  .strictObject({
    name: personName().optional(),
    role: MemberRoleSchema.optional(),
    status: z
      .enum(["active", "suspended"])
      .optional()
      .openapi({ description: "`suspended` revokes every session and token of the member at once." }),
    external_id: externalIdInput.optional(),
    groups: groups.optional().openapi({ description: "Replaces the member's groups." }),
  })
  .openapi("UpdateMemberRequest");

export const AcceptInvitationBody = z
  .strictObject({
    token: z.string().min(1).max(200).openapi({ description: "The `token` of the invitation URL." }),
    password: z
      .string()
      .min(10, "must be at least 10 characters")
      .max(1024)
      .openapi({ example: "a long passphrase" }),
  })
  .openapi("AcceptInvitationRequest");

export const ReinviteBody = z
  .strictObject({ member_id: z.string().min(1).openapi({ example: "usr_01JD3Q8W2X4Y5Z6A7B8C9D0E1F" }) })
  .openapi("ReinviteRequest");
