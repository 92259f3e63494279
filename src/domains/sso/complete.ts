import { and, eq } from "drizzle-orm";
import type { BatchItem, BatchResponse } from "drizzle-orm/batch";
import { type SsoType, ssoIdentities, ssoSessionCodes, ssoSignIns, users } from "../../db/schema";
import { codeHash as hashOf, newSecret } from "../../platform/auth/single-use";
import { ApiError } from "../../platform/errors";
import { nowIso } from "../../platform/ids";
import type { Writable } from "../../platform/service/commit";
import type { ServiceContext } from "../../platform/service/context";
import { enterInstitutionToWrite } from "../../platform/service/directory";
import { PERSON_NAME, sanitizeDisplayText } from "../../platform/text";
import { activeConnection } from "../institutions/sso/service";
import type { MemberRow } from "../members/present";
import {
  type IdpPerson,
  MemberProvisionRefused,
  provisionMember,
  signInMember,
  type UserRow,
} from "../members/provision";
import { memberColumns } from "../members/queries";
import type { ActiveConnection } from "./connection";
import { recordRefusal, type SignInRow, succeededSignIn } from "./log";
import { SsoRefusal } from "./refusal";

/** A browser has this long to exchange the code of its landing page's fragment. */
export const CODE_TTL_MS = 60_000;

/**
 * A finished sign-in's code: `<institution id>.<256 random bits>`, naming its institution so that
 * exchanging it runs where the institution lives (as an invitation token does); stored as its hash.
 */
async function newSsoCode(institutionId: string): Promise<{ code: string; codeHash: string }> {
  const code = `${institutionId}.${newSecret()}`;
  return { code, codeHash: await hashOf(code) };
}

/** The institution a code names; null for a code that names none (then it is looked up in the first database). */
export function institutionOfSsoCode(code: string): string | null {
  const dot = code.indexOf(".");
  return dot > 0 ? code.slice(0, dot) : null;
}

/** Who the IdP says signed in, read through the connection's mapping by the protocol. */
export interface SsoIdentity {
  /** The IdP's stable id of the person (OIDC `sub`, SAML NameID). */
  subject: string;
  email: string;
  /** OIDC `email_verified` (SAML: undefined). `false` is refused. */
  emailVerified?: boolean;
  name?: string | null;
  /** The mapped role claim's value(s), raw; null or undefined: not mapped. */
  role?: string | readonly string[] | null;
  groups?: readonly string[] | null;
}

const MAPPABLE_ROLES = ["institution_admin", "instructor", "learner"] as const;
type MappableRole = (typeof MAPPABLE_ROLES)[number];

/**
 * The role the IdP's value maps to: one of `institution_admin`, `instructor`, `learner` (the highest
 * when several are sent; anything else is ignored), never above `instructor` unless the settings let
 * the mapping grant `institution_admin`. Null: nothing recognisable was sent.
 */
export function mappedRole(raw: SsoIdentity["role"], mayGrantAdmin: boolean): MappableRole | null {
  if (raw === null || raw === undefined) return null;
  const values = (typeof raw === "string" ? [raw] : [...raw]).map((v) => String(v).trim().toLowerCase());
  const found = MAPPABLE_ROLES.find((role) => values.includes(role));
  if (!found) return null;
  return found === "institution_admin" && !mayGrantAdmin ? "instructor" : found;
}

/**
 * Runs a protocol's callback under the SSO log: a refusal anywhere in it (the pending request, the
 * IdP's answer, the member) is logged for the institution and answered as `sso_sign_in_refused`
 * (`bad_gateway` when the IdP failed us), with the reason and the log entry's id. Both protocols'
 * callbacks go through here.
 */
export async function underSignInLog<T>(
  ctx: ServiceContext,
  target: { institutionId: string; protocol: SsoType },
  run: () => Promise<T>,
): Promise<T> {
  // The callback's path names the institution: everything after runs where it lives (the pending
  // request, the member, the log, the code: design/multi-database.md#entry-points), refused while a
  // move switches it over.
  await enterInstitutionToWrite(ctx, target.institutionId);
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof SsoRefusal)) throw error;
    const logged = await recordRefusal(ctx, { ...target, refusal: error });
    throw new ApiError(error.upstream ? "bad_gateway" : "sso_sign_in_refused", error.message, {
      extensions: { reason: error.reason, sign_in_id: logged.id },
    });
  }
}

/**
 * The reads that find the member, as batch items: by (institution, IdP subject) — joined to a user
 * still in the institution — and by e-mail (any institution: the caller checks whose it is, and
 * looks there only within the institution's verified domains). Each with the member's groups.
 */
function memberReads(ctx: ServiceContext, institutionId: string, subject: string, email: string) {
  const { db } = ctx;
  const columns = { user: users, groupsJson: memberColumns.groupsJson };
  return [
    db
      .select(columns)
      .from(ssoIdentities)
      .innerJoin(users, eq(users.id, ssoIdentities.userId))
      .where(
        and(
          eq(ssoIdentities.institutionId, institutionId),
          eq(ssoIdentities.subject, subject),
          // A member who left the institution is no longer who this subject is.
          eq(users.institutionId, institutionId),
        ),
      ),
    db.select(columns).from(users).where(eq(users.email, email)),
  ] as const;
}

type FoundUser = { user: UserRow; groupsJson: string };

function domainOf(email: string): string {
  return email.slice(email.lastIndexOf("@") + 1).replace(/\.$/, "");
}

export interface SignedIn {
  user: UserRow;
  signIn: SignInRow;
  /** For the browser's landing page fragment; single use, 60 s. */
  code: string;
}

/**
 * The end of every SSO sign-in, whatever the protocol, once the IdP's answer is verified: finds the
 * member by (institution, IdP subject), else by e-mail within the institution's verified domains;
 * provisions an unknown person as an `active` member (mapped role and groups, a seat); activates an
 * invited one; refuses a suspended one. The identity link, the log entry and a single-use code ride
 * in the member's batch. Refusals throw `SsoRefusal` (run it under `underSignInLog`).
 */
export async function completeSsoSignIn<A extends readonly BatchItem<"sqlite">[] = []>(
  ctx: ServiceContext,
  input: {
    institutionId: string;
    protocol: SsoType;
    identity: SsoIdentity;
    /** The connection as the callback read it in this request (read here when left out). */
    active?: ActiveConnection | null;
    /**
     * Statements of the protocol's own to run in the round trip that looks the member up (SAML's
     * replay cache), and its verdict on their results: it throws an `SsoRefusal` to refuse.
     */
    first?: { statements: A; check: (results: BatchResponse<A>) => void };
  },
): Promise<SignedIn> {
  const { institutionId, protocol, identity } = input;
  const email = identity.email.trim().toLowerCase();
  const person = { subject: identity.subject, email };
  const active = input.active !== undefined ? input.active : await activeConnection(ctx, institutionId);
  if (!active || active.connection.type !== protocol)
    throw new SsoRefusal(
      "sso_inactive",
      "The institution's single sign-on is not active (or uses another protocol now); sign in another way.",
      false,
      person,
    );
  if (identity.emailVerified === false)
    throw new SsoRefusal(
      "email_unverified",
      `The identity provider says ${email} is not verified (email_verified: false); verify it at the identity provider.`,
      false,
      person,
    );
  const { connection, verifiedDomains } = active;
  const mayGrantAdmin = connection.mappingMayGrantAdmin;
  const idpPerson: IdpPerson = {
    email,
    name: sanitizeDisplayText(identity.name ?? null, PERSON_NAME),
    role: mappedRole(identity.role, mayGrantAdmin),
    groups:
      identity.groups === null || identity.groups === undefined
        ? null
        : identity.groups.filter((g): g is string => typeof g === "string").map((g) => g.slice(0, 100)),
  };
  const now = ctx.now();
  const { code, codeHash } = await newSsoCode(institutionId);
  const alongside = (userId: string, provisioned: boolean) => {
    const signIn = succeededSignIn(ctx, { institutionId, protocol, ...person, userId, provisioned });
    const statements: Writable[] = [
      ctx.db
        .insert(ssoIdentities)
        .values({
          institutionId,
          subject: identity.subject,
          userId,
          protocol,
          createdAt: nowIso(now),
          lastSignInAt: nowIso(now),
        })
        .onConflictDoUpdate({
          target: [ssoIdentities.institutionId, ssoIdentities.subject],
          set: { userId, protocol, lastSignInAt: nowIso(now) },
        }),
      ctx.db.insert(ssoSignIns).values(signIn),
      ctx.db.insert(ssoSessionCodes).values({
        codeHash,
        userId,
        institutionId,
        signInId: signIn.id,
        expiresAt: now + CODE_TTL_MS,
        usedAt: null,
      }),
    ];
    return { signIn, statements };
  };

  const atVerifiedDomain = verifiedDomains.includes(domainOf(email));
  /** The member by subject, else by e-mail at a verified domain: one round trip (with `first` the first time). */
  const lookUp = async (withFirst: boolean): Promise<FoundUser | undefined> => {
    const reads = memberReads(ctx, institutionId, identity.subject, email);
    const extra = withFirst && input.first ? input.first.statements : [];
    const results = (await ctx.db.batch([...reads, ...extra] as never)) as unknown as [
      FoundUser[],
      FoundUser[],
      ...unknown[],
    ];
    if (withFirst && input.first) input.first.check(results.slice(2) as unknown as BatchResponse<A>);
    const [linked, byEmail] = results;
    return linked[0] ?? (atVerifiedDomain ? byEmail[0] : undefined);
  };

  try {
    for (let attempt = 0; attempt < 2; attempt++) {
      const found = await lookUp(attempt === 0);
      if (found) {
        const existing = found.user;
        const { signIn, statements } = alongside(existing.id, false);
        // The member as the members API sees it (with groups), read in the lookup's round trip.
        const current: MemberRow = {
          id: existing.id,
          email: existing.email,
          name: existing.name,
          role: existing.role,
          status: existing.status,
          externalId: existing.externalId,
          groups: JSON.parse(found.groupsJson) as string[],
          createdAt: existing.createdAt,
          updatedAt: existing.updatedAt,
          lastActiveAt: existing.lastActiveAt,
        };
        const user = await signInMember(ctx, {
          institutionId,
          member: existing,
          current,
          person: idpPerson,
          mayGrantAdmin,
          alongside: statements,
        });
        return { user, signIn, code };
      }
      if (!atVerifiedDomain)
        throw new SsoRefusal(
          "email_domain_not_verified",
          `${email} is not at one of the institution's verified domains (${verifiedDomains.join(", ") || "none"}), so the identity provider cannot create a member with it; verify the domain in the SSO settings.`,
          false,
          person,
        );
      let signIn: SignInRow | undefined;
      const user = await provisionMember(ctx, {
        institutionId,
        person: idpPerson,
        alongside: (userId) => {
          const made = alongside(userId, true);
          signIn = made.signIn;
          return made.statements;
        },
      });
      // Null: a twin sign-in created the member (or took the address) first: look again.
      if (user && signIn) return { user, signIn, code };
    }
  } catch (error) {
    if (error instanceof MemberProvisionRefused)
      throw new SsoRefusal(error.reason, error.message, false, person);
    throw error;
  }
  throw new Error("SSO sign-in: the member could be neither found nor created");
}
