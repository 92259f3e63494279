import { and, asc, eq, not } from "drizzle-orm";
import { directoryKeys, ssoConnections, ssoDomains, users } from "../../../db/schema";
import { ssoClientSecretBinding } from "../../../platform/crypto/sealed-values";
import { seal } from "../../../platform/crypto/sealing";
import { inJsonList } from "../../../platform/db";
import { type FieldError, validationError } from "../../../platform/errors";
import { nowIso } from "../../../platform/ids";
import type { PrincipalContext, ServiceContext } from "../../../platform/service/context";
import { FIRST_DATABASE } from "../../../platform/service/databases";
import { institutionDatabase } from "../../../platform/service/directory";
import { institutionInScope } from "../access";
import { emailDomain } from "./enforced";
import { presentSso } from "./present";
import type { PutSsoInput } from "./schemas";
import { completenessErrors, validOidc, validSaml } from "./validate";

/** Which institution's SSO, and the origin our service-provider URLs are built on. */
interface SsoTarget {
  institutionId: string;
  origin: string;
}

async function load(ctx: ServiceContext, institutionId: string) {
  const { db } = ctx;
  const [connection, domains] = await db.batch([
    db.select().from(ssoConnections).where(eq(ssoConnections.institutionId, institutionId)),
    db
      .select()
      .from(ssoDomains)
      .where(eq(ssoDomains.institutionId, institutionId))
      .orderBy(asc(ssoDomains.domain)),
  ]);
  return { connection: connection[0] ?? null, domains };
}

async function isActiveAdmin(ctx: ServiceContext, institutionId: string, userId: string): Promise<boolean> {
  const row = await ctx.db
    .select({ id: users.id })
    .from(users)
    .where(
      and(
        eq(users.id, userId),
        eq(users.institutionId, institutionId),
        eq(users.role, "institution_admin"),
        eq(users.status, "active"),
      ),
    )
    .get();
  return row !== undefined;
}

/** The SSO settings of the institution the caller may act on. */
export async function readSso(ctx: PrincipalContext, { institutionId, origin }: SsoTarget) {
  await institutionInScope(ctx, institutionId);
  const { connection, domains } = await load(ctx, institutionId);
  return presentSso(institutionId, connection, domains, origin, ctx.now());
}

function typeErrors(input: PutSsoInput): FieldError[] {
  const other = input.type === "saml" ? "oidc" : "saml";
  const errors: FieldError[] = [];
  if (!input[input.type]) errors.push({ path: input.type, message: `is required with type "${input.type}"` });
  if (input[other]) errors.push({ path: other, message: `must be left out with type "${input.type}"` });
  const seen = new Set<string>();
  input.domains.forEach((domain, index) => {
    if (seen.has(domain)) errors.push({ path: `domains.${index}`, message: `lists ${domain} twice` });
    seen.add(domain);
  });
  return errors;
}

/** A domain's verification token: 128 random bits as 32 lower-case hex digits. */
function newVerificationToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Replaces the institution's SSO settings (PUT). Everything given is checked, the IdP's documents
 * fetched, before anything is written; the connection and its domains are written in one batch. A
 * domain is only claimed here: it routes nobody until verified (`verifySsoDomain`), so another
 * institution's claim on the same domain is neither refused nor mentioned.
 */
export async function putSso(
  ctx: PrincipalContext,
  { institutionId, origin, input }: SsoTarget & { input: PutSsoInput },
) {
  await institutionInScope(ctx, institutionId);
  const shapeErrors = typeErrors(input);
  if (shapeErrors.length > 0) throw validationError(shapeErrors);
  const { db } = ctx;
  const nowMs = ctx.now();
  const { connection: before } = await load(ctx, institutionId);

  const saml = input.type === "saml" && input.saml ? await validSaml(ctx, input.saml) : null;
  const oidc = input.type === "oidc" && input.oidc ? await validOidc(ctx, input.oidc) : null;
  // Left out: the stored secret stays (an admin changing the scopes need not paste it again).
  const secretInput = input.oidc?.client_secret;
  const clientSecretSealed =
    input.type !== "oidc" || secretInput === null
      ? null
      : secretInput !== undefined
        ? await seal(secretInput, ctx.config.encryptionKey, ssoClientSecretBinding(institutionId))
        : (before?.clientSecretSealed ?? null);
  const incomplete = completenessErrors(input, saml, oidc, clientSecretSealed !== null);
  if (
    input.break_glass_admin_id !== null &&
    !(await isActiveAdmin(ctx, institutionId, input.break_glass_admin_id))
  )
    incomplete.push({
      path: "break_glass_admin_id",
      message: "must be the id of an active institution_admin of this institution",
    });
  if (incomplete.length > 0) throw validationError(incomplete);

  const now = nowIso(nowMs);
  const row = {
    institutionId,
    type: input.type,
    state: input.state,
    enforced: input.enforced,
    saml,
    oidc,
    clientSecretSealed,
    breakGlassUserId: input.break_glass_admin_id,
    mappingMayGrantAdmin: input.idp_may_grant_admin,
    updatedAt: now,
  };
  const { institutionId: _key, ...replaced } = row;
  // A domain kept keeps its token and status; one left out loses its row (token and verification
  // with it); one added starts pending with a new token. Nothing here looks at other institutions.
  await db.batch([
    db
      .insert(ssoConnections)
      .values(row)
      .onConflictDoUpdate({ target: ssoConnections.institutionId, set: replaced }),
    db
      .delete(ssoDomains)
      .where(
        and(eq(ssoDomains.institutionId, institutionId), not(inJsonList(ssoDomains.domain, input.domains))),
      ),
    ...input.domains.map((domain) =>
      db
        .insert(ssoDomains)
        .values({
          institutionId,
          domain,
          token: newVerificationToken(),
          status: "pending",
          createdAt: now,
          updatedAt: now,
        })
        .onConflictDoNothing({ target: [ssoDomains.institutionId, ssoDomains.domain] }),
    ),
  ]);
  const { connection, domains } = await load(ctx, institutionId);
  return presentSso(institutionId, connection, domains, origin, nowMs);
}

/**
 * Which institution's SSO an e-mail address belongs to: the one holding its domain (exactly, not a
 * parent domain) verified; null when nobody does, however many institutions claim it unverified.
 * For SSO sign-in and discovery, which check the connection's state themselves.
 */
export async function institutionForSsoEmail(ctx: ServiceContext, email: string): Promise<string | null> {
  const at = email.lastIndexOf("@");
  if (at < 1) return null;
  const domain = email
    .slice(at + 1)
    .trim()
    .toLowerCase()
    .replace(/\.$/, "");
  if (!domain) return null;
  const row = await ctx.db
    .select({ institutionId: ssoDomains.institutionId })
    .from(ssoDomains)
    .where(and(eq(ssoDomains.domain, domain), eq(ssoDomains.status, "verified")))
    .get();
  return row?.institutionId ?? null;
}

export type SsoConnection = typeof ssoConnections.$inferSelect;

/**
 * What SSO sign-in reads of an institution's settings: its connection when `active`, with the
 * domains it holds verified; null otherwise (not configured, draft, inactive).
 */
export async function activeConnection(
  ctx: ServiceContext,
  institutionId: string,
): Promise<{ connection: SsoConnection; verifiedDomains: string[] } | null> {
  const { connection, domains } = await load(ctx, institutionId);
  if (connection?.state !== "active") return null;
  return {
    connection,
    verifiedDomains: domains.filter((row) => row.status === "verified").map((row) => row.domain),
  };
}

/**
 * The enforced SSO an e-mail address falls under: the institution holding its domain verified, when
 * its connection is active and `enforced`, with its break-glass admin; null otherwise.
 */
export async function enforcedSsoFor(
  ctx: ServiceContext,
  email: string,
): Promise<{ institutionId: string; breakGlassUserId: string | null } | null> {
  const domain = emailDomain(email);
  if (!domain) return null;
  // One read on every password sign-in: the verified holder of the domain, if it enforces SSO.
  const query = (db: ServiceContext["db"]) =>
    db
      .select({
        institutionId: ssoConnections.institutionId,
        breakGlassUserId: ssoConnections.breakGlassUserId,
      })
      .from(ssoDomains)
      .innerJoin(ssoConnections, eq(ssoConnections.institutionId, ssoDomains.institutionId))
      .where(
        and(
          eq(ssoDomains.domain, domain),
          eq(ssoDomains.status, "verified"),
          eq(ssoConnections.state, "active"),
          eq(ssoConnections.enforced, true),
        ),
      );
  if (ctx.database !== FIRST_DATABASE) return (await query(ctx.db).get()) ?? null;
  // In the same round trip, the domain's directory key: a holder outside DB (design/multi-database.md).
  const [here, keys] = await ctx.db.batch([
    query(ctx.db),
    ctx.db
      .select({ institutionId: directoryKeys.institutionId })
      .from(directoryKeys)
      .where(and(eq(directoryKeys.kind, "sso_domain"), eq(directoryKeys.key, domain))),
  ]);
  if (here[0]) return here[0];
  const holder = keys[0]?.institutionId;
  if (!holder) return null;
  return (await query((await institutionDatabase(ctx, holder)).db).get()) ?? null;
}
