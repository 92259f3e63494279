import { nowIso } from "../ids";
import { everyDatabase, type ServiceContext } from "./context";
import { FIRST_DATABASE } from "./databases";

/**
 * The orphan-key sweep (docs/design/multi-database.md#the-orphan-key-sweep): removes the directory
 * keys of `DB` that lead to nothing — an e-mail no user of the institution's database has, a token
 * hash no token there has, a slug no institution there has, and so for every kind an entry point
 * claims (a SCIM token, a Stripe customer, a verified SSO domain, an LTI registration or pair). Such keys are left by a write that failed
 * after its claim, and by rows deleted without releasing their key (a purged token, a removed
 * member); while one stays, `DB`'s triggers refuse its address to a user of `DB`.
 *
 * A key is claimed before its row is written, so a key younger than `ORPHAN_KEY_GRACE_MS` may belong
 * to a write in flight: it is left alone (a claim re-dates a key its institution held already, and the
 * delete re-checks the age, so a key claimed again while the sweep looks is kept). Keys of an
 * institution being moved are left to the move. Kinds the sweep has no check for are skipped.
 *
 * Bounded: each run reads `ORPHAN_KEY_PAGE` keys from where the last run stopped (by primary key,
 * the position kept in `sweep_cursors`) and checks them with one statement per database; after the
 * last page it starts again from the first. It runs in the cron's invocation for `DB` only: the
 * directory is there, and it reads every database itself.
 */

export const ORPHAN_KEY_GRACE_MS = 60 * 60_000;
export const ORPHAN_KEY_PAGE = 500;
const CURSOR = "orphan-keys";
const CHECKED_KINDS = [
  "email",
  "token",
  "slug",
  "scim_token",
  "stripe_customer",
  "sso_domain",
  "lti_registration",
  "lti_client",
];

interface Candidate {
  kind: string;
  key: string;
  institutionId: string;
  binding: string;
}

/** Keys after `after` (kind, key) by primary key, with where their institution lives (active only). */
const PAGE_SQL = `SELECT k.kind, k.key, k.institution_id AS institutionId, k.created_at AS createdAt,
    coalesce(p.binding, 'DB') AS binding, coalesce(p.state, 'active') AS state
  FROM directory_keys k LEFT JOIN institution_databases p ON p.institution_id = k.institution_id
  WHERE (k.kind, k.key) > (?1, ?2)
  ORDER BY k.kind, k.key LIMIT ?3`;

/** Of the candidates (`json_each` of kind, key), those whose row this database does not have. */
const ORPHANS_SQL = `SELECT j.value->>'kind' AS kind, j.value->>'key' AS key FROM json_each(?1) j
  WHERE CASE j.value->>'kind'
    WHEN 'email' THEN NOT EXISTS (SELECT 1 FROM users WHERE email = j.value->>'key')
    WHEN 'token' THEN NOT EXISTS (SELECT 1 FROM api_tokens WHERE token_hash = j.value->>'key')
    WHEN 'slug' THEN NOT EXISTS (SELECT 1 FROM institutions WHERE slug = j.value->>'key')
    WHEN 'scim_token' THEN NOT EXISTS (SELECT 1 FROM scim_tokens WHERE token_hash = j.value->>'key')
    WHEN 'stripe_customer' THEN
      NOT EXISTS (SELECT 1 FROM billing_accounts WHERE stripe_customer_id = j.value->>'key')
    WHEN 'sso_domain' THEN
      NOT EXISTS (SELECT 1 FROM sso_domains WHERE domain = j.value->>'key' AND status = 'verified')
    WHEN 'lti_registration' THEN NOT EXISTS (SELECT 1 FROM lti_consumers WHERE id = j.value->>'key')
    -- clientKey() of domains/lti/registrations/directory-keys.ts: \`<issuer> <client id>\`.
    WHEN 'lti_client' THEN
      NOT EXISTS (SELECT 1 FROM lti_consumers WHERE issuer || ' ' || client_id = j.value->>'key')
    ELSE 0 END`;

/** Deletes the keys (`json_each` of kind, key, institutionId) still held as they were and claimed before ?2. */
const DELETE_SQL = `DELETE FROM directory_keys
  WHERE (kind, key, institution_id) IN
    (SELECT value->>'kind', value->>'key', value->>'institutionId' FROM json_each(?1))
    AND created_at < ?2`;

const CURSOR_SQL = "SELECT position FROM sweep_cursors WHERE name = ?1";
const SAVE_CURSOR_SQL = `INSERT INTO sweep_cursors (name, position, updated_at) VALUES (?1, ?2, ?3)
  ON CONFLICT (name) DO UPDATE SET position = excluded.position, updated_at = excluded.updated_at`;

/** One run: a page of keys checked, its orphans past the grace period removed. The number removed. */
export async function sweepOrphanKeys(ctx: ServiceContext): Promise<number> {
  if (ctx.database !== FIRST_DATABASE) return 0;
  const home = ctx.home;
  const cursor = await home.d1.prepare(CURSOR_SQL).bind(CURSOR).first<{ position: string }>();
  const [afterKind = "", afterKey = ""] = cursor ? (JSON.parse(cursor.position) as string[]) : [];
  const { results: page } = await home.d1
    .prepare(PAGE_SQL)
    .bind(afterKind, afterKey, ORPHAN_KEY_PAGE)
    .all<Candidate & { createdAt: string; state: string }>();
  const cutoff = nowIso(ctx.now() - ORPHAN_KEY_GRACE_MS);
  const candidates = page.filter(
    (row) => CHECKED_KINDS.includes(row.kind) && row.state === "active" && row.createdAt < cutoff,
  );
  const orphans = (
    await Promise.all(
      everyDatabase(ctx).map(async ({ name, d1 }) => {
        const here = candidates.filter((row) => row.binding === name);
        if (here.length === 0) return [];
        const { results } = await d1
          .prepare(ORPHANS_SQL)
          .bind(JSON.stringify(here.map(({ kind, key }) => ({ kind, key }))))
          .all<{ kind: string; key: string }>();
        const missing = new Set(results.map((row) => `${row.kind} ${row.key}`));
        return here.filter((row) => missing.has(`${row.kind} ${row.key}`));
      }),
    )
  ).flat();
  const last = page.at(-1);
  // After the last page, the next run starts from the first again.
  const position = JSON.stringify(last && page.length === ORPHAN_KEY_PAGE ? [last.kind, last.key] : []);
  const statements = [home.d1.prepare(SAVE_CURSOR_SQL).bind(CURSOR, position, nowIso(ctx.now()))];
  if (orphans.length > 0)
    statements.unshift(
      home.d1
        .prepare(DELETE_SQL)
        .bind(
          JSON.stringify(orphans.map(({ kind, key, institutionId }) => ({ kind, key, institutionId }))),
          cutoff,
        ),
    );
  const results = await home.d1.batch(statements);
  return orphans.length > 0 ? (results[0]?.meta.changes ?? 0) : 0;
}
