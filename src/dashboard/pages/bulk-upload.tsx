import { Select } from "../components";
import { CsrfField, ErrorSummary } from "../layout";
import { MEMBERS_BULK_PATH, MEMBERS_PATH } from "../prefixes";
import type { DashboardSession } from "../session";

/** Bulk uploads of members: the upload form (the report is bulk-report.tsx). */

export const bulkPath = (id: string) => `${MEMBERS_BULK_PATH}/${encodeURIComponent(id)}`;
export const LABELS = { file: "CSV file", mode: "Mode", force: "Suspend more than 10 %" };
const MODES = [
  { value: "upsert", label: "Add and update the members in the file" },
  { value: "sync", label: "Sync: also suspend members missing from the file" },
];

export interface UploadForm {
  mode: string;
  force: boolean;
}

export function UploadMembersForm({
  session,
  form,
  errors,
}: {
  session: DashboardSession;
  form: UploadForm;
  errors: string[];
}) {
  return (
    <>
      <h1>Upload members</h1>
      <p>
        Add and update many members at once from a CSV file of your SIS or HR system. You first see what the
        file would do (a dry run, which changes nothing), then apply it.
      </p>
      <ErrorSummary errors={errors} />
      <form method="post" action={MEMBERS_BULK_PATH} enctype="multipart/form-data">
        <CsrfField token={session.csrf} />
        <input type="hidden" name="dry_run" value="true" />
        <label for="file">{LABELS.file}</label>
        <p class="hint" id="file-hint">
          UTF-8, a header row naming the columns: <code>email</code> (required), <code>name</code> (or{" "}
          <code>first_name</code> and <code>last_name</code>), <code>role</code>, <code>external_id</code>,{" "}
          <code>groups</code> (separated by <code>;</code>). OneRoster <code>users.csv</code> works too. Up to
          5 MiB.
        </p>
        <input
          id="file"
          name="file"
          type="file"
          accept=".csv,text/csv"
          required
          aria-describedby="file-hint"
        />
        <Select id="mode" label={LABELS.mode} value={form.mode} options={MODES} />
        <label class="check">
          <input type="checkbox" name="force" value="true" checked={form.force} />
          <span>
            {LABELS.force}
            <small>
              Only with sync: go ahead even if the file would suspend more than 10 % of the members.
            </small>
          </span>
        </label>
        <div class="actions">
          <button type="submit">Check the file (dry run)</button>
          <a class="button secondary" href={MEMBERS_PATH}>
            Cancel
          </a>
        </div>
      </form>
      <p class="hint">An example file:</p>
      <pre>
        <code>
          {
            "email,name,role,external_id,groups\nana.lima@school.example,Ana Lima,learner,S-10023,Year 7;French\n"
          }
        </code>
      </pre>
    </>
  );
}
