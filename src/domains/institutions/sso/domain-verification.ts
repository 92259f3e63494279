import { and, eq } from "drizzle-orm";
import { type SsoDomainMethod, ssoDomains } from "../../../db/schema";
import { enforce } from "../../../platform/auth/policy";
import { ApiError } from "../../../platform/errors";
import { nowIso } from "../../../platform/ids";
import { lookupTxt } from "../../../platform/outbound/txt";
import type { PrincipalContext, ServiceContext } from "../../../platform/service/context";
import { findInstitution } from "../access";
import { mayVerifySsoDomain } from "../policy";
import { afterVerify, beforeVerify, demoteOtherHolders } from "./domain-key";
import { presentDomainVerification } from "./present";
import { isPublicMailDomain } from "./public-mail-domains";
import { claimStands } from "./sql";

/** Proving an SSO domain: its TXT record through the deployment's DNS-over-HTTPS resolver, or staff's word. */

type DomainRow = typeof ssoDomains.$inferSelect;

function domainNotFound(domain: string): ApiError {
  return new ApiError(
    "not_found",
    `No SSO domain ${domain.slice(0, 253)} in this institution's configuration; add it to \`domains\` with PUT first.`,
  );
}

/** Why a DNS verification failed, as the 422's `reason`. */
type NotVerifiedReason =
  | "no_such_name"
  | "dns_error"
  | "no_txt_record"
  | "no_matching_record"
  | "public_mail_domain";

function notVerified(row: DomainRow, reason: NotVerifiedReason, detail: string): ApiError {
  return new ApiError("domain_not_verified", detail, {
    extensions: { domain: row.domain, domain_status: row.status, reason },
  });
}

/** What the resolver answered for the domain, judged against this institution's TXT value. */
async function dnsProof(ctx: ServiceContext, row: DomainRow): Promise<void> {
  const dohUrl = ctx.config.outbound.dohUrl;
  if (!dohUrl)
    throw new ApiError(
      "service_unavailable",
      "DNS verification is not available: this deployment has no DNS resolver configured. Ask platform staff to confirm the domain.",
    );
  const expected = presentDomainVerification(row).txt_value;
  const lookup = await lookupTxt(dohUrl, row.domain);
  if (!lookup.ok) {
    if (lookup.reason === "resolver_unavailable")
      throw new ApiError(
        "service_unavailable",
        "The DNS resolver did not answer; nothing was changed. Try again in a minute.",
        { headers: { "Retry-After": "60" } },
      );
    throw notVerified(
      row,
      lookup.reason,
      `Not verified: ${lookup.detail}. Publish a TXT record ${expected} at ${row.domain}.`,
    );
  }
  if (lookup.records.some((text) => text.trim() === expected)) return;
  if (lookup.records.length === 0)
    throw notVerified(
      row,
      "no_txt_record",
      `Not verified: found no TXT record at ${row.domain}. Publish a TXT record ${expected} there; DNS changes may take a while to be visible.`,
    );
  const records = lookup.records.length === 1 ? "1 TXT record" : `${lookup.records.length} TXT records`;
  throw notVerified(
    row,
    "no_matching_record",
    `Not verified: found ${records} at ${row.domain}, none is ${expected}: copy the value exactly as shown in domain_verifications.`,
  );
}

/**
 * Verifies one of the institution's SSO domains: by its TXT record (`dns`), or, for platform staff
 * only, without DNS (`manual`). A failure changes nothing. On success the domain is verified for
 * this institution, and any other institution that held it verified is set back to pending in the
 * same batch: the latest proof of control wins, and at most one institution routes a domain (the
 * partial unique index). Neither answer names the other institution.
 */
export async function verifySsoDomain(
  ctx: PrincipalContext,
  { institutionId, domain, method }: { institutionId: string; domain: string; method: SsoDomainMethod },
) {
  // Loaded first: an unknown institution is 404 before the rule is asked, as another's is.
  await findInstitution(ctx, institutionId);
  enforce(mayVerifySsoDomain(ctx.principal, { id: institutionId }, method));
  const { db } = ctx;
  const mine = and(eq(ssoDomains.institutionId, institutionId), eq(ssoDomains.domain, domain));
  const row = await db.select().from(ssoDomains).where(mine).get();
  if (!row) throw domainNotFound(domain);
  // A claim stored before public mail domains were refused at PUT: no proof, DNS or staff, makes
  // gmail.com anybody's.
  if (isPublicMailDomain(row.domain))
    throw notVerified(
      row,
      "public_mail_domain",
      `${row.domain} is a public e-mail provider's domain: it cannot route sign-ins to one institution. Remove it from domains.`,
    );
  if (method === "dns") await dnsProof(ctx, row);

  const now = nowIso(ctx.now());
  // Only the claim that was proven: if a PUT removed (or removed and re-added) the domain meanwhile,
  // its token changed and neither statement does anything.
  const proven = and(mine, eq(ssoDomains.token, row.token));
  // Across databases too (design/multi-database.md#entry-points): the domain's directory key first.
  const handover = await beforeVerify(ctx, { institutionId, domain });
  const [, promoted] = await db.batch([
    demoteOtherHolders(db, { domain, institutionId, now }, claimStands(proven)),
    db
      .update(ssoDomains)
      .set({ status: "verified", method, verifiedAt: now, updatedAt: now })
      .where(proven)
      .returning(),
  ]);
  const updated = promoted[0];
  await afterVerify(ctx, { institutionId, domain, verified: Boolean(updated) }, handover);
  if (!updated) throw domainNotFound(domain);
  return presentDomainVerification(updated);
}
