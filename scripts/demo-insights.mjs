// Demo data of the institution insights: an SSO draft for Acme and compliance records for the demo
// institutions, so that GET …/sso and GET …/compliance answer something real on a fresh machine
// (analytics needs nothing here: the demo activity is recorded through the real write path, which
// keeps its rollup). Idempotent: a second run keeps what is there.

const q = (value) =>
  value === null || value === undefined
    ? "NULL"
    : typeof value === "number"
      ? String(value)
      : `'${String(value).replace(/'/g, "''")}'`;

const ACME = "ins_demo_acme";
const AT = "2026-11-01T09:00:00Z";

const ACME_SAML_DRAFT = {
  idp_entity_id: "https://idp.acme.example/saml/metadata",
  sso_url: "https://idp.acme.example/saml/sso",
  certificates: [],
  metadata_url: null,
  attribute_mapping: { email: "email", name: "displayName", role: null, groups: "memberOf" },
};

/** [institution, type, required, status, signed_at, expires_at, document_url] */
const COMPLIANCE = [
  [
    ACME,
    "dpa",
    1,
    "signed",
    "2026-01-15T10:00:00Z",
    "2027-01-15T10:00:00Z",
    "https://trust.lingua.example/acme/dpa.pdf",
  ],
  [ACME, "gdpr", 1, "signed", "2026-01-15T10:00:00Z", null, "https://trust.lingua.example/acme/gdpr.pdf"],
  [ACME, "ferpa", 0, "not_applicable", null, null, null],
  [ACME, "soc2_report", 0, "in_review", null, null, null],
  [
    ACME,
    "vpat",
    0,
    "signed",
    "2025-06-30T10:00:00Z",
    "2026-06-30T10:00:00Z",
    "https://trust.lingua.example/vpat-2025.pdf",
  ],
  ["ins_demo_globex", "dpa", 1, "in_review", null, null, null],
  ["ins_demo_globex", "ferpa", 1, "signed", "2026-03-01T10:00:00Z", "2027-03-01T10:00:00Z", null],
  ["ins_demo_initech", "dpa", 1, "signed", "2026-02-01T10:00:00Z", "2028-02-01T10:00:00Z", null],
  ["ins_demo_initech", "gdpr", 1, "signed", "2026-02-01T10:00:00Z", null, null],
  ["ins_demo_initech", "soc2_report", 1, "signed", "2026-05-01T10:00:00Z", "2027-05-01T10:00:00Z", null],
];

/** The rows of the institutions `here` keeps (those of one database: npm run dev writes each where its institution lives). */
export function insightsSeedSql(here = () => true) {
  const lines = [];
  if (here(ACME))
    lines.push(
      `INSERT INTO sso_connections (institution_id, type, state, enforced, saml, oidc, client_secret_sealed, updated_at) VALUES (${q(ACME)}, 'saml', 'draft', 0, ${q(JSON.stringify(ACME_SAML_DRAFT))}, NULL, NULL, ${q(AT)}) ON CONFLICT DO NOTHING;`,
      `INSERT INTO sso_domains (domain, institution_id) VALUES ('acme.lingua.test', ${q(ACME)}) ON CONFLICT DO NOTHING;`,
    );
  for (const [institution, type, required, status, signedAt, expiresAt, url] of COMPLIANCE.filter(([i]) =>
    here(i),
  ))
    lines.push(
      `INSERT INTO compliance_documents (institution_id, type, required, status, signed_at, expires_at, document_url, updated_at) VALUES (${[institution, type, required, status, signedAt, expiresAt, url, AT].map(q).join(", ")}) ON CONFLICT DO NOTHING;`,
    );
  return `${lines.join("\n")}\n`;
}
