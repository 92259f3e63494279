// Deterministic learners and learning activity for local development and benchmarks.
// The learners are SQL (like the demo accounts); the activity is a list of attempts that
// scripts/seed.mjs sends through the real write path (POST /api/progress/attempts), so every
// aggregate, achievement and event is produced by the same code as in production.
import { createHash } from "node:crypto";
import { mulberry32 } from "./catalog-data.mjs";
import { hashPassword } from "./demo-data.mjs";

export const ACTIVITY_SEED = 20261121;
const TIME_ZONES = [
  "Europe/Berlin",
  "Europe/London",
  "America/New_York",
  "America/Sao_Paulo",
  "Asia/Tokyo",
  "Australia/Sydney",
  "UTC",
  "Europe/Madrid",
];
const FIRST_NAMES = [
  "Ana",
  "Ben",
  "Chloé",
  "Dev",
  "Eun-ji",
  "Farah",
  "Gus",
  "Hana",
  "Ivo",
  "Jon",
  "Kemal",
  "Lea",
  "Mateo",
  "Nia",
  "Omar",
  "Pia",
  "Quinn",
  "Rosa",
  "Sven",
  "Tariq",
  "Uma",
  "Vera",
  "Wen",
  "Yara",
  "Zoe",
];
const LAST_NAMES = [
  "Alvarez",
  "Becker",
  "Chen",
  "Dubois",
  "Eriksen",
  "Fischer",
  "García",
  "Haddad",
  "Ito",
  "Jansen",
  "Kowalski",
  "López",
  "Müller",
  "Nakamura",
  "Okafor",
  "Petrov",
  "Rossi",
  "Silva",
  "Tanaka",
  "Weber",
];

/** The demo institutions' learners: how many, and which course languages they study. */
export const DEMO_COHORTS = [
  { institutionId: "ins_demo_acme", domain: "acme.lingua.test", share: 0.5, languages: ["es", "fr"] },
  { institutionId: "ins_demo_globex", domain: "globex.lingua.test", share: 0.25, languages: ["de", "it"] },
  {
    institutionId: "ins_demo_initech",
    domain: "initech.lingua.test",
    share: 0.25,
    languages: ["es", "de", "ja"],
  },
];

/**
 * The demo accounts that sign in as learners (scripts/demo-data.mjs): regular, diligent learners, so
 * that every report shows something when you sign in as them.
 */
export const FEATURED_LEARNERS = [
  {
    id: "usr_demo_acme_learner",
    institutionId: "ins_demo_acme",
    timeZone: "UTC",
    languages: ["es"],
    diligence: 0.97,
  },
  {
    id: "usr_demo_globex_learner",
    institutionId: "ins_demo_globex",
    timeZone: "UTC",
    languages: ["de"],
    diligence: 0.9,
  },
];

/** A UUID derived from a name, so that re-running the generator resends the same attempt ids. */
export function stableUuid(name) {
  const h = createHash("sha256").update(name).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${((parseInt(h[16], 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** `count` learners spread over the cohorts, with stable ids, e-mails, names and time zones. */
export function generateLearners(
  count,
  { cohorts = DEMO_COHORTS, seed = ACTIVITY_SEED, prefix = "demo" } = {},
) {
  const random = mulberry32(seed);
  const learners = [];
  let index = 0;
  for (const [c, cohort] of cohorts.entries()) {
    const size = c === cohorts.length - 1 ? count - learners.length : Math.round(count * cohort.share);
    for (let i = 0; i < size; i++) {
      index += 1;
      const n = String(index).padStart(5, "0");
      const first = FIRST_NAMES[Math.floor(random() * FIRST_NAMES.length)];
      const last = LAST_NAMES[Math.floor(random() * LAST_NAMES.length)];
      learners.push({
        id: `usr_${prefix}_learner_${n}`,
        email: `learner${n}@${cohort.domain}`,
        name: `${first} ${last}`,
        institutionId: cohort.institutionId,
        timeZone: TIME_ZONES[Math.floor(random() * TIME_ZONES.length)],
        languages: cohort.languages,
        leaderboardOptOut: random() < 0.08,
      });
    }
  }
  return learners;
}

const q = (v) =>
  v === null || v === undefined
    ? "NULL"
    : typeof v === "number"
      ? String(v)
      : typeof v === "boolean"
        ? v
          ? "1"
          : "0"
        : `'${String(v).replace(/'/g, "''")}'`;

/** Idempotent SQL for the learners (one shared password hash: computing 100,000 PBKDF2 rounds each would take minutes). */
export function learnersSql(learners, password) {
  const hash = hashPassword(password);
  return `${learners
    .map(
      (l) =>
        `INSERT INTO users (id, email, name, role, institution_id, password_hash, time_zone, leaderboard_opt_out) VALUES (${q(l.id)}, ${q(l.email)}, ${q(l.name)}, 'learner', ${q(l.institutionId)}, ${q(hash)}, ${q(l.timeZone)}, ${q(l.leaderboardOptOut)}) ON CONFLICT DO NOTHING;`,
    )
    .join("\n")}\n`;
}

/**
 * Several weeks of study for one learner, ending now: a course in one of the cohort's languages,
 * studied on most days at a habitual hour, item by item in course order, with misses retried.
 * `catalog` is buildDemoCatalog()'s output (published courses only are used).
 */
export function generateAttempts(learner, catalog, { days, now = Date.now(), seed = ACTIVITY_SEED }) {
  const random = mulberry32(seed ^ hashInt(learner.id));
  const courses = catalog.filter(
    (c) => Number(c.course.published) === 1 && learner.languages.includes(c.course.target_language),
  );
  if (courses.length === 0) return [];
  const course = courses[Math.floor(random() * courses.length)];
  const items = course.items;
  const drawn = 0.35 + random() * 0.6;
  const diligence = learner.diligence ?? drawn;
  const ability = 0.55 + random() * 0.4;
  const skillOffset = Object.fromEntries(
    ["reading", "listening", "writing", "speaking", "vocabulary", "grammar"].map((s) => [
      s,
      (random() - 0.5) * 0.3,
    ]),
  );
  const hour = 7 + Math.floor(random() * 15);
  const attempts = [];
  let position = 0;
  let sequence = 0;
  for (let d = days - 1; d >= 0; d--) {
    if (random() > diligence) continue;
    let at = now - d * 86_400_000 - (24 - hour) * 3_600_000 + Math.floor(random() * 3_000_000);
    const perDay = 5 + Math.floor(random() * 26);
    for (let k = 0; k < perDay && position < items.length; k++) {
      const item = items[position];
      const level = ["A1", "A2", "B1", "B2", "C1", "C2"].indexOf(item.cefr_level);
      const chance = Math.min(0.98, Math.max(0.05, ability + (skillOffset[item.skill] ?? 0) - level * 0.04));
      const pass = random() < chance;
      const score = pass ? 0.6 + random() * 0.4 : random() * 0.55;
      const duration = 10 + Math.floor(random() * 80);
      at += duration * 1000 + Math.floor(random() * 20_000);
      if (at > now - 60_000) break;
      sequence += 1;
      attempts.push({
        id: stableUuid(`${learner.id}:${sequence}`),
        training_item_id: item.id,
        score: Math.round(score * 1000) / 1000,
        correct: pass && score >= 0.75,
        duration_seconds: duration,
        occurred_at: new Date(at).toISOString().replace(/\.\d{3}Z$/, "Z"),
      });
      if (pass) position += 1;
    }
  }
  return attempts;
}

function hashInt(text) {
  return parseInt(createHash("sha256").update(text).digest("hex").slice(0, 8), 16);
}
