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

/** Idempotent SQL: re-running it inserts nothing twice and keeps existing rows (and passwords) as they are. */
export function demoSeedSql() {
  const lines = [];
  for (const i of DEMO_INSTITUTIONS) {
    lines.push(
      `INSERT INTO institutions (id, slug, name, plan, rate_limit_per_minute) VALUES (${q(i.id)}, ${q(i.slug)}, ${q(i.name)}, ${q(i.plan)}, ${q(i.rateLimit)}) ON CONFLICT DO NOTHING;`,
    );
  }
  for (const u of DEMO_USERS) {
    // A salt of its own for every account, like any other user's.
    lines.push(
      `INSERT INTO users (id, email, name, role, institution_id, password_hash) VALUES (${q(u.id)}, ${q(u.email)}, ${q(u.name)}, ${q(u.role)}, ${q(u.institutionId)}, ${q(hashPassword(DEMO_PASSWORD))}) ON CONFLICT DO NOTHING;`,
    );
  }
  return `${lines.join("\n")}\n`;
}
