import { z } from "@hono/zod-openapi";
import { ROSTER_SYNC_STATUSES } from "../../../db/schema";
import { pageQueryShape, pageSchema } from "../../../platform/http/pagination";

/** Names and Role Provisioning: the roster of a launch's context, and its syncs. */

export const RosterQuery = z.object({
  ...pageQueryShape,
  role: z
    .string()
    .trim()
    .min(1, "must not be empty")
    .max(255)
    .optional()
    .openapi({
      param: { name: "role", in: "query" },
      example: "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner",
      description:
        "Only members holding this role, as the platform filters it (NRPS `role`: a full role URI or a short name such as `Learner`).",
    }),
  limit: z.coerce
    .number()
    .int()
    .min(1, "must be >= 1")
    .max(1000, "must be <= 1000")
    .optional()
    .openapi({
      param: { name: "limit", in: "query" },
      description:
        "Members per page the platform is asked for (NRPS `limit`); Lingua follows every page the platform answers. Not the size of this list's pages (`per_page`).",
    }),
});

export const RosterMemberSchema = z
  .object({
    user_id: z
      .string()
      .openapi({ description: "The member's LTI `sub` at this platform.", example: "a6d5c443-1f51" }),
    name: z.string().nullable(),
    given_name: z.string().nullable(),
    family_name: z.string().nullable(),
    email: z.string().nullable(),
    roles: z.array(z.string()).openapi({
      example: ["http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"],
    }),
    status: z.enum(["Active", "Inactive", "Deleted"]).openapi({
      description: "As the platform says (`Active` when it says nothing).",
    }),
    lingua_user_id: z.string().nullable().openapi({
      description:
        "The Lingua user linked to this `sub` of the registration (by a launch or a sync); null when there is none yet.",
      example: "usr_01JD3Q8W2X4Y5Z6A7B8C9D0E1Q",
    }),
  })
  .openapi("LtiRosterMember");

export const RosterPageSchema = pageSchema(RosterMemberSchema, "LtiRosterPage");

export const RosterSyncSchema = z
  .object({
    id: z.string().openapi({ example: "lrs_01JD3Q8W2X4Y5Z6A7B8C9D0E1R" }),
    launch_id: z.string(),
    status: z.enum(ROSTER_SYNC_STATUSES).openapi({
      description:
        "`completed` when the sync ran within the request (500 active members or fewer); `queued`, then `processing`, then `completed` or `failed` for a larger roster, which a queue works through.",
    }),
    active: z.number().int().nullable().openapi({
      description: "Active members of the roster (null until the roster was read).",
    }),
    inactive: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Inactive and deleted members, not provisioned." }),
    created: z.number().int().openapi({ description: "New Lingua members made by this sync." }),
    already_linked: z
      .number()
      .int()
      .openapi({ description: "Active members who were Lingua members already." }),
    seats_exhausted: z
      .number()
      .int()
      .openapi({ description: "Active members left out because every seat of the institution was taken." }),
    error: z.string().nullable().openapi({ description: "Why a `failed` sync stopped." }),
    created_at: z.string(),
    completed_at: z.string().nullable(),
  })
  .openapi("LtiRosterSync");
