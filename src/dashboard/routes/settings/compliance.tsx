import type { readCompliance } from "../../../domains/institutions/compliance/service";
import { When } from "../../layout";

/** The settings page's compliance documents (read-only: Lingua's team records them). */
const COMPLIANCE_LABELS: Record<string, string> = {
  dpa: "Data processing agreement (DPA)",
  gdpr: "GDPR documentation",
  ferpa: "FERPA",
  coppa: "COPPA",
  soc2_report: "SOC 2 report",
  vpat: "Accessibility conformance report (VPAT)",
};

type Compliance = Awaited<ReturnType<typeof readCompliance>>;

export function ComplianceCard({ compliance }: { compliance: Compliance }) {
  return (
    <section class="card" aria-labelledby="compliance-heading">
      <h2 id="compliance-heading">Compliance documents</h2>
      <p>
        {compliance.status === "complete"
          ? "Every required document is in place."
          : "Action required: a required document is not signed yet. Lingua's team records documents as they are signed; contact them to sign one."}
      </p>
      <div class="table-wrap">
        <table>
          <caption>Documents</caption>
          <thead>
            <tr>
              <th scope="col">Document</th>
              <th scope="col">Required</th>
              <th scope="col">Status</th>
              <th scope="col">Signed</th>
              <th scope="col">Expires</th>
            </tr>
          </thead>
          <tbody>
            {compliance.documents.map((d) => (
              <tr>
                <th scope="row">
                  {d.document_url ? (
                    <a href={d.document_url}>{COMPLIANCE_LABELS[d.type] ?? d.type}</a>
                  ) : (
                    (COMPLIANCE_LABELS[d.type] ?? d.type)
                  )}
                </th>
                <td>{d.required ? "Yes" : "No"}</td>
                <td>
                  <span
                    class={d.status === "signed" || d.status === "not_applicable" ? "badge" : "badge warn"}
                  >
                    {d.status.replace("_", " ")}
                  </span>
                </td>
                <td>
                  <When iso={d.signed_at} />
                </td>
                <td>
                  <When iso={d.expires_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
