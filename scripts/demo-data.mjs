// Demo accounts for local development only. Nothing here runs in production: the SQL is generated
// on the developer's machine and applied to the local D1 by `npm run dev`.
import { pbkdf2Sync, randomBytes } from "node:crypto";

export const DEMO_PASSWORD = "lingua-demo-2026";
// Must match src/platform/crypto/passwords.ts (the cap of deployed Workers).
const PBKDF2_ITERATIONS = 100_000;

export const DEMO_INSTITUTIONS = [
  { id: "ins_demo_acme", slug: "acme", name: "Acme Language Academy", plan: "pro", rateLimit: null },
  { id: "ins_demo_globex", slug: "globex", name: "Globex School", plan: "free", rateLimit: null },
  { id: "ins_demo_initech", slug: "initech", name: "Initech", plan: "enterprise", rateLimit: 3000 },
];

export const DEMO_USERS = [
  {
    id: "usr_demo_admin",
    email: "admin@lingua.test",
    name: "Platform Admin",
    role: "platform_admin",
    institutionId: null,
  },
  {
    id: "usr_demo_acme_owner",
    email: "owner@acme.lingua.test",
    name: "Ada Acme",
    role: "institution_admin",
    institutionId: "ins_demo_acme",
  },
  {
    id: "usr_demo_acme_learner",
    email: "learner@acme.lingua.test",
    name: "Leo Learner",
    role: "learner",
    institutionId: "ins_demo_acme",
  },
  {
    id: "usr_demo_globex_owner",
    email: "owner@globex.lingua.test",
    name: "Gina Globex",
    role: "institution_admin",
    institutionId: "ins_demo_globex",
  },
  {
    id: "usr_demo_globex_learner",
    email: "learner@globex.lingua.test",
    name: "Gus Learner",
    role: "learner",
    institutionId: "ins_demo_globex",
  },
  {
    id: "usr_demo_initech_owner",
    email: "owner@initech.lingua.test",
    name: "Ivy Initech",
    role: "institution_admin",
    institutionId: "ins_demo_initech",
  },
];

/**
 * Where the demo institutions live (docs/design/multi-database.md): Globex in DB_1, every other in DB
 * (which needs no directory entry), as `npm run dev` sets them up; a set-up that put Globex in DB
 * before keeps it there. Without a placement, every function here puts everything in DB (the bench's
 * single-database datasets).
 */
export const DEMO_PLACEMENT = { ins_demo_globex: "DB_1" };

/** The database an institution's rows go to; platform users (no institution) live in DB. */
export function demoDatabaseOf(institutionId, placement = {}) {
  return (institutionId && placement[institutionId]) || "DB";
}

/**
 * DB's directory for the institutions placed elsewhere: their entries, their slugs' keys and the
 * e-mail keys of `users` of theirs (each `{ email, institutionId }`). Written before their rows.
 */
export function directorySql(users, placement = {}) {
  const lines = [];
  for (const [institutionId, binding] of Object.entries(placement)) {
    if (binding === "DB") continue;
    const slug = DEMO_INSTITUTIONS.find((i) => i.id === institutionId)?.slug;
    lines.push(
      `INSERT INTO institution_databases (institution_id, binding, updated_at) VALUES (${q(institutionId)}, ${q(binding)}, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) ON CONFLICT DO NOTHING;`,
    );
    if (slug)
      lines.push(
        `INSERT INTO directory_keys (kind, key, institution_id) VALUES ('slug', ${q(slug)}, ${q(institutionId)}) ON CONFLICT DO NOTHING;`,
      );
  }
  for (const u of users)
    if (demoDatabaseOf(u.institutionId, placement) !== "DB")
      lines.push(
        `INSERT INTO directory_keys (kind, key, institution_id) VALUES ('email', ${q(u.email)}, ${q(u.institutionId)}) ON CONFLICT DO NOTHING;`,
      );
  return lines.length > 0 ? `${lines.join("\n")}\n` : "";
}

export function hashPassword(password) {
  const salt = randomBytes(16);
  const hash = pbkdf2Sync(password, salt, PBKDF2_ITERATIONS, 32, "sha256");
  return `pbkdf2-sha256$${PBKDF2_ITERATIONS}$${salt.toString("base64")}$${hash.toString("base64")}`;
}

const q = (value) =>
  value === null || value === undefined
    ? "NULL"
    : typeof value === "number"
      ? String(value)
      : `'${String(value).replace(/'/g, "''")}'`;

/**
 * Idempotent SQL for `database`: the demo institutions, accounts and members that `placement` puts
 * there (and, in DB, the directory of those elsewhere). Re-running it inserts nothing twice and keeps existing rows
 * (and passwords) as they are.
 */
export function demoSeedSql({ database = "DB", placement = {} } = {}) {
  const here = (institutionId) => demoDatabaseOf(institutionId, placement) === database;
  const lines = [];
  if (database === "DB") lines.push(directorySql([...DEMO_USERS, ...DEMO_MEMBERS], placement).trimEnd());
  for (const i of DEMO_INSTITUTIONS.filter((i) => here(i.id))) {
    lines.push(
      `INSERT INTO institutions (id, slug, name, plan, rate_limit_per_minute) VALUES (${q(i.id)}, ${q(i.slug)}, ${q(i.name)}, ${q(i.plan)}, ${q(i.rateLimit)}) ON CONFLICT DO NOTHING;`,
    );
  }
  for (const u of DEMO_USERS.filter((u) => here(u.institutionId))) {
    // A salt of its own for every account, like any other user's.
    lines.push(
      `INSERT INTO users (id, email, name, role, institution_id, password_hash) VALUES (${q(u.id)}, ${q(u.email)}, ${q(u.name)}, ${q(u.role)}, ${q(u.institutionId)}, ${q(hashPassword(DEMO_PASSWORD))}) ON CONFLICT DO NOTHING;`,
    );
  }
  return `${lines.filter(Boolean).join("\n")}\n${demoMembersSql(here)}`;
}

// ---- Institutions and members (src/domains/institutions) --------------------------------------
// Settings of the demo institutions, a few more members (an instructor who can sign in, invited
// members with SIS ids) and groups for every demo learner, so the member endpoints answer something
// real on a fresh machine. Idempotent like the rest.

const DEMO_INSTITUTION_SETTINGS = [
  {
    id: "ins_demo_acme",
    seats: 500,
    branding: { display_name: "Acme Academy", primary_color: "#1a73e8", accent_color: "#fbbc04" },
    locale: "en-GB",
    timeZone: "Europe/London",
  },
  { id: "ins_demo_globex", seats: 150, branding: {}, locale: "es", timeZone: "Europe/Madrid" },
  {
    id: "ins_demo_initech",
    seats: null,
    branding: { display_name: "Initech Learning", primary_color: "#4a148c" },
    locale: "en-US",
    timeZone: "America/Chicago",
  },
];

export const DEMO_MEMBERS = [
  {
    id: "usr_demo_acme_instructor",
    email: "instructor@acme.lingua.test",
    name: "Ines Instructor",
    role: "instructor",
    institutionId: "ins_demo_acme",
    status: "active",
    externalId: "ACME-T-001",
    groups: ["Year 7", "Year 8"],
  },
  {
    id: "usr_demo_acme_invited",
    email: "new.teacher@acme.lingua.test",
    name: "Nina New",
    role: "instructor",
    institutionId: "ins_demo_acme",
    status: "invited",
    externalId: "ACME-T-002",
    groups: ["Year 9"],
  },
  {
    id: "usr_demo_acme_suspended",
    email: "former.student@acme.lingua.test",
    name: "Sam Suspended",
    role: "learner",
    institutionId: "ins_demo_acme",
    status: "suspended",
    externalId: "ACME-S-999",
    groups: [],
  },
];

/** Settings and extra members of the institutions `here` keeps; run with the demo accounts. */
export function demoMembersSql(here = () => true) {
  const lines = [];
  for (const s of DEMO_INSTITUTION_SETTINGS.filter((s) => here(s.id))) {
    lines.push(
      `UPDATE institutions SET seats = ${q(s.seats)}, branding = ${q(JSON.stringify(s.branding))}, locale = ${q(s.locale)}, time_zone = ${q(s.timeZone)}, updated_at = created_at WHERE id = ${q(s.id)} AND seats IS NULL AND locale = 'en' AND time_zone = 'UTC';`,
    );
  }
  lines.push(
    `UPDATE users SET external_id = 'ACME-S-' || substr(id, -4) WHERE id = 'usr_demo_acme_learner' AND external_id IS NULL;`,
  );
  for (const m of DEMO_MEMBERS.filter((m) => here(m.institutionId))) {
    // Invited members have no usable password until they accept an invitation.
    const hash = m.status === "invited" ? "!" : hashPassword(DEMO_PASSWORD);
    lines.push(
      `INSERT INTO users (id, email, name, role, institution_id, password_hash, status, external_id) VALUES (${q(m.id)}, ${q(m.email)}, ${q(m.name)}, ${q(m.role)}, ${q(m.institutionId)}, ${q(hash)}, ${q(m.status)}, ${q(m.externalId)}) ON CONFLICT DO NOTHING;`,
    );
    for (const g of m.groups) {
      lines.push(
        `INSERT INTO member_groups (institution_id, user_id, group_name) VALUES (${q(m.institutionId)}, ${q(m.id)}, ${q(g)}) ON CONFLICT DO NOTHING;`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}

/**
 * Every demo learner joins a year group (Year 7, 8 or 9, by its id) and about half of them a
 * language club too. Run after the demo learners exist (npm run dev does, after the activity seed).
 */
export function demoGroupsSql() {
  const year = `'Year ' || (7 + unicode(substr(id, -1)) % 3)`;
  return `INSERT INTO member_groups (institution_id, user_id, group_name)
  SELECT institution_id, id, ${year} FROM users WHERE role = 'learner' AND institution_id IS NOT NULL AND status = 'active'
  ON CONFLICT DO NOTHING;
INSERT INTO member_groups (institution_id, user_id, group_name)
  SELECT institution_id, id, 'Language club' FROM users
  WHERE role = 'learner' AND institution_id IS NOT NULL AND status = 'active' AND unicode(substr(id, -2, 1)) % 2 = 0
  ON CONFLICT DO NOTHING;
`;
}
