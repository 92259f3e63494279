import { and, eq, gt, isNull, sql } from "drizzle-orm";
import { invitations, users } from "../../db/schema";
import { batchGuard } from "../../platform/batch";
import { randomBytes, sha256Hex, toBase64Url } from "../../platform/crypto/encoding";
import { hashPassword } from "../../platform/crypto/passwords";
import type { Database } from "../../platform/db";
import { ApiError } from "../../platform/errors";
import { nowIso } from "../../platform/ids";
import type { ServiceContext } from "../../platform/service/context";
import { enterInstitutionToWrite } from "../../platform/service/directory";
import { reapplyWhileMemberChanges, writeMemberChange } from "./member-change";
import { memberColumns, toMemberRow } from "./queries";

export const INVITATION_TTL_MS = 7 * 86_400_000;
/**
 * Where an invitation URL points: the admin dashboard's page on which the person chooses a password
 * (src/dashboard/prefixes.ts, ACCEPT_INVITATION_PATH; a test holds the two together). An app of the
 * customer's own may post the URL's `token` to `POST /api/auth/accept-invitation` instead.
 */
export const INVITATION_PATH = "/dashboard/accept-invitation";
const TOKEN_PREFIX = "inv_";

export interface MintedInvitation {
  token: string;
  tokenHash: string;
  expiresAt: string;
}

/**
 * A fresh invitation token of `institutionId`: its id, then 256 random bits (`inv_<institution>.<…>`);
 * only its SHA-256 is stored. The id says which database to look in when it is accepted, wherever the
 * institution lives by then (design/multi-database.md). Valid INVITATION_TTL_MS from `now`.
 */
export async function mintInvitation(now: number, institutionId: string): Promise<MintedInvitation> {
  const token = `${TOKEN_PREFIX}${institutionId}.${toBase64Url(randomBytes(32))}`;
  return { token, tokenHash: await sha256Hex(token), expiresAt: nowIso(now + INVITATION_TTL_MS) };
}

/** The institution an invitation token names (a token minted before they named one names none). */
function institutionOfToken(token: string): string | null {
  const dot = token.indexOf(".");
  return token.startsWith(TOKEN_PREFIX) && dot > TOKEN_PREFIX.length
    ? token.slice(TOKEN_PREFIX.length, dot)
    : null;
}

export function invitationUrl(origin: string, token: string): string {
  return `${origin}${INVITATION_PATH}?token=${encodeURIComponent(token)}`;
}

/** The invitation row of a member: a new one replaces the member's previous invitation. */
export function upsertInvitation(
  db: Database,
  row: { userId: string; institutionId: string; invitation: MintedInvitation; now: string },
) {
  const values = {
    userId: row.userId,
    institutionId: row.institutionId,
    tokenHash: row.invitation.tokenHash,
    expiresAt: row.invitation.expiresAt,
    acceptedAt: null,
    createdAt: row.now,
  };
  return db
    .insert(invitations)
    .values(values)
    .onConflictDoUpdate({
      target: invitations.userId,
      set: { tokenHash: values.tokenHash, expiresAt: values.expiresAt, acceptedAt: null, createdAt: row.now },
    });
}

const INVALID = "The invitation is unknown, already used or expired; ask your administrator for a new one.";

/** The open invitation of `tokenHash` and its member, as a member change compares it. */
async function openInvitation(db: Database, tokenHash: string, now: string) {
  const found = await db
    .select({ invitation: invitations, user: users, member: memberColumns })
    .from(invitations)
    .innerJoin(users, eq(users.id, invitations.userId))
    .where(eq(invitations.tokenHash, tokenHash))
    .get();
  if (
    !found ||
    found.invitation.acceptedAt !== null ||
    found.invitation.expiresAt <= now ||
    found.user.status !== "invited" ||
    found.user.institutionId !== found.invitation.institutionId
  ) {
    throw new ApiError("invalid_invitation", INVALID);
  }
  const { invitation, user, member } = found;
  return { institutionId: invitation.institutionId, user, current: toMemberRow(member) };
}

/**
 * Sets the invited member's password and activates them, once: the invitation's `accepted_at` is
 * written in the same batch, under a guard that it was still open, so two concurrent accepts
 * cannot both succeed. Written by member-change.ts, only while the member is as read (re-read and
 * re-applied when another change overtook it, `409 conflict` after four lost races), so that its
 * `member.updated` says what the member was. Returns the user, for the caller to open a session.
 */
export async function acceptInvitation(ctx: ServiceContext, input: { token: string; password: string }) {
  const institutionOfIt = institutionOfToken(input.token);
  if (institutionOfIt) await enterInstitutionToWrite(ctx, institutionOfIt);
  const { db } = ctx;
  const tokenHash = await sha256Hex(input.token);
  const now = nowIso(ctx.now());
  // Refused before the (slow) hashing when the token is no good.
  let read: Awaited<ReturnType<typeof openInvitation>> | undefined = await openInvitation(db, tokenHash, now);
  const passwordHash = await hashPassword(input.password);
  const open = and(
    eq(invitations.tokenHash, tokenHash),
    isNull(invitations.acceptedAt),
    gt(invitations.expiresAt, now),
  );
  const stillOpen = sql`EXISTS (SELECT 1 FROM ${invitations} WHERE ${open})`;
  return reapplyWhileMemberChanges(
    async () => {
      const { institutionId, user, current } = read ?? (await openInvitation(db, tokenHash, now));
      read = undefined;
      const row = await writeMemberChange(ctx, {
        institutionId,
        current,
        changes: { status: { from: "invited", to: "active" } },
        alsoSet: { passwordHash, lastActiveAt: now },
        guards: [batchGuard(db, stillOpen)],
        extra: [db.update(invitations).set({ acceptedAt: now }).where(open)],
        // Accepted (or expired) meanwhile: read again, which refuses it.
        stale: async () => !(await db.select({ ok: sql<number>`1` }).from(invitations).where(open).get()),
      });
      const { email, name, role, status, externalId, updatedAt, lastActiveAt } = row;
      return { ...user, passwordHash, email, name, role, status, externalId, updatedAt, lastActiveAt };
    },
    () => {
      throw new ApiError(
        "conflict",
        "The member kept changing while the invitation was accepted; send the acceptance again.",
      );
    },
  );
}
