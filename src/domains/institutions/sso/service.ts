import { and, asc, eq, ne } from "drizzle-orm";
import { ssoConnections, ssoDomains } from "../../../db/schema";
import type { Env } from "../../../env";
import type { Principal } from "../../../platform/auth/principal";
import { config } from "../../../platform/config";
import { ssoClientSecretBinding } from "../../../platform/crypto/sealed-values";
import { seal } from "../../../platform/crypto/sealing";
import { database, inJsonList } from "../../../platform/db";
import { type FieldError, validationError } from "../../../platform/errors";
import { nowIso } from "../../../platform/ids";
import { institutionInScope } from "../access";
import { presentSso } from "./present";
import type { PutSsoInput } from "./schemas";
import { completenessErrors, validOidc, validSaml } from "./validate";

interface Context {
  env: Env;
  principal: Principal;
  institutionId: string;
  origin: string;
  nowMs?: number;
}

async function load(env: Env, institutionId: string) {
  const db = database(env.DB);
  const [connection, domains] = await db.batch([
    db.select().from(ssoConnections).where(eq(ssoConnections.institutionId, institutionId)),
    db
      .select({ domain: ssoDomains.domain })
      .from(ssoDomains)
      .where(eq(ssoDomains.institutionId, institutionId))
      .orderBy(asc(ssoDomains.domain)),
  ]);
  return { connection: connection[0] ?? null, domains: domains.map((d) => d.domain) };
}

export async function readSso({ env, principal, institutionId, origin, nowMs = Date.now() }: Context) {
  await institutionInScope(env, principal, institutionId);
  const { connection, domains } = await load(env, institutionId);
  return presentSso(institutionId, connection, domains, origin, nowMs);
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

function isDomainTaken(error: unknown): boolean {
  const message = String((error as { cause?: unknown })?.cause ?? error);
  return /UNIQUE constraint failed: sso_domains\.domain/.test(message);
}

/**
 * Replaces the institution's SSO settings (PUT). Everything given is checked, the IdP's documents
 * fetched, before anything is written; the connection and its domains are written in one batch. A
 * domain claimed by another institution is refused by the read below, and by the primary key of
 * `sso_domains` when two institutions claim it at once.
 */
export async function putSso(context: Context & { input: PutSsoInput }) {
  const { env, principal, institutionId, origin, input, nowMs = Date.now() } = context;
  await institutionInScope(env, principal, institutionId);
  const shapeErrors = typeErrors(input);
  if (shapeErrors.length > 0) throw validationError(shapeErrors);
  const db = database(env.DB);
  const [{ connection: before }, taken] = await Promise.all([
    load(env, institutionId),
    input.domains.length > 0
      ? db
          .select({ domain: ssoDomains.domain })
          .from(ssoDomains)
          .where(
            and(inJsonList(ssoDomains.domain, input.domains), ne(ssoDomains.institutionId, institutionId)),
          )
      : Promise.resolve([]),
  ]);
  const takenDomains = new Set(taken.map((t) => t.domain));
  const domainErrors = input.domains.flatMap((domain, index) =>
    takenDomains.has(domain)
      ? [{ path: `domains.${index}`, message: `${domain} is already claimed by another institution` }]
      : [],
  );
  if (domainErrors.length > 0) throw validationError(domainErrors);

  const saml = input.type === "saml" && input.saml ? await validSaml(env, input.saml, nowMs) : null;
  const oidc = input.type === "oidc" && input.oidc ? await validOidc(env, input.oidc) : null;
  // Left out: the stored secret stays (an admin changing the scopes need not paste it again).
  const secretInput = input.oidc?.client_secret;
  const clientSecretSealed =
    input.type !== "oidc" || secretInput === null
      ? null
      : secretInput !== undefined
        ? await seal(secretInput, config(env).encryptionKey, ssoClientSecretBinding(institutionId))
        : (before?.clientSecretSealed ?? null);
  const incomplete = completenessErrors(input, saml, oidc, clientSecretSealed !== null);
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
    updatedAt: now,
  };
  const { institutionId: _key, ...replaced } = row;
  try {
    await db.batch([
      db
        .insert(ssoConnections)
        .values(row)
        .onConflictDoUpdate({ target: ssoConnections.institutionId, set: replaced }),
      db.delete(ssoDomains).where(eq(ssoDomains.institutionId, institutionId)),
      ...input.domains.map((domain) => db.insert(ssoDomains).values({ domain, institutionId })),
    ]);
  } catch (error) {
    if (isDomainTaken(error))
      throw validationError([
        { path: "domains", message: "a domain was claimed by another institution meanwhile" },
      ]);
    throw error;
  }
  const { connection, domains } = await load(env, institutionId);
  return presentSso(institutionId, connection, domains, origin, nowMs);
}
