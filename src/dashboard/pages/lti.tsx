import type { ConsumerRow } from "../../domains/lti/registrations/service";
import { toolUrls } from "../../domains/lti/registrations/tool-urls";
import { ActionForm, Col, ConfirmForm, CopyField, EmptyState, ListTable, Notice } from "../components";
import { CsrfField, ErrorSummary, When } from "../layout";
import { LTI_PATH } from "../prefixes";
import type { DashboardSession } from "../session";
import { RegistrationFields, type RegistrationForm } from "./lti-form";

/** The LTI section's registrations (list, form, values for the LMS); routes/lti.tsx holds the handlers. */

export const PER_PAGE = 25;
export const LAUNCHES_PATH = `${LTI_PATH}/launches`;
export const registrationPath = (id: string) => `${LTI_PATH}/registrations/${encodeURIComponent(id)}`;
export const NOTICES: Record<string, string> = {
  created: "The registration was added. Paste the values below into your LMS.",
  saved: "The registration was saved.",
  deleted: "The registration was deleted; its launch log stays.",
};

export function RegistrationList({
  session,
  rows,
  total,
  page,
  notice,
  link,
}: {
  session: DashboardSession;
  rows: ConsumerRow[];
  total: number;
  page: number;
  notice?: string;
  /** A registration link just created: shown this once. */
  link?: { url: string; expires_at: string };
}) {
  return (
    <>
      <h1>LTI</h1>
      <Notice text={notice} />
      <p>
        LTI 1.3 lets your LMS (Canvas, Moodle, Blackboard, D2L) launch Lingua courses and lessons with single
        sign-on, and receive grades back. Register each LMS once.
      </p>
      <div class="actions">
        <a class="button" href={`${LTI_PATH}/new`}>
          Add registration
        </a>
        <ActionForm
          action={`${LTI_PATH}/registration-link`}
          csrf={session.csrf}
          button="Create a registration link"
          secondary
        />
        <a class="button secondary" href={LAUNCHES_PATH}>
          Launch log
        </a>
      </div>
      {link ? (
        <div class="card">
          <CopyField
            id="registration-link"
            label="Registration link"
            value={link.url}
            hint={
              <>
                Paste it where your LMS registers a tool by URL (LTI Dynamic Registration). Single use, valid
                until <When iso={link.expires_at} />; shown only this once.
              </>
            }
          />
        </div>
      ) : null}
      <ListTable
        label="LTI registrations"
        count={rows.length}
        total={total}
        path={LTI_PATH}
        page={page}
        perPage={PER_PAGE}
        empty={
          <EmptyState title="No LMS registered yet">
            <p>
              Create a registration link and paste it into your LMS (it registers itself), or add a
              registration by hand with the values your LMS shows.
            </p>
          </EmptyState>
        }
        head={
          <>
            <Col>Name</Col>
            <Col>Issuer</Col>
            <Col>Client id</Col>
            <Col>Deployments</Col>
            <Col>Added</Col>
          </>
        }
        rows={rows.map((r) => (
          <tr>
            <th scope="row">
              <a href={registrationPath(r.id)}>{r.name}</a>
            </th>
            <td>
              <code>{r.issuer}</code>
            </td>
            <td>
              <code>{r.clientId}</code>
            </td>
            <td>{r.deploymentIds.length}</td>
            <td>
              <When iso={r.createdAt} />
            </td>
          </tr>
        ))}
      />
    </>
  );
}

export function NewRegistration({
  session,
  form,
  errors,
}: {
  session: DashboardSession;
  form: RegistrationForm;
  errors: string[];
}) {
  return (
    <>
      <h1>Add an LTI registration</h1>
      <p>
        Copy these values from your LMS's LTI 1.3 developer key or tool configuration. Easier: a registration
        link, which your LMS uses to register Lingua by itself.
      </p>
      <ErrorSummary errors={errors} />
      <form method="post" action={LTI_PATH}>
        <CsrfField token={session.csrf} />
        <RegistrationFields form={form} />
        <div class="actions">
          <button type="submit">Add registration</button>
          <a class="button secondary" href={LTI_PATH}>
            Cancel
          </a>
        </div>
      </form>
    </>
  );
}

/** The values an LMS administrator pastes into the platform, each with a copy button. */
export function ToolValues({ row, origin }: { row: ConsumerRow; origin: string }) {
  const urls = toolUrls(origin, row.id);
  return (
    <section aria-labelledby="values-h" class="card">
      <h2 id="values-h">Values for your LMS</h2>
      <CopyField
        id="login-url"
        label="OIDC login URL"
        value={urls.login_url}
        hint="Canvas: “OpenID Connect Initiation Url”; Moodle: “Initiate login URL”."
      />
      <CopyField
        id="launch-url"
        label="Target link URI and redirect URI"
        value={urls.launch_url}
        hint="Canvas: “Target Link URI” and “Redirect URIs”; Moodle: “Tool URL” and “Redirection URI(s)”."
      />
      <CopyField
        id="jwks-url"
        label="Public key set URL"
        value={urls.jwks_url}
        hint="Canvas: “Public JWK URL”; Moodle: “Public keyset”."
      />
    </section>
  );
}

export function RegistrationDetail({
  session,
  row,
  origin,
  form,
  errors,
  notice,
}: {
  session: DashboardSession;
  row: ConsumerRow;
  origin: string;
  form: RegistrationForm;
  errors: string[];
  notice?: string;
}) {
  const path = registrationPath(row.id);
  return (
    <>
      <h1>{row.name}</h1>
      <Notice text={notice} />
      <ToolValues row={row} origin={origin} />
      <div class="actions">
        <a class="button secondary" href={`${LAUNCHES_PATH}?consumer_id=${encodeURIComponent(row.id)}`}>
          Launches of this registration
        </a>
      </div>
      <section aria-labelledby="edit-h">
        <h2 id="edit-h">Platform settings</h2>
        <ErrorSummary errors={errors} />
        <form method="post" action={path}>
          <CsrfField token={session.csrf} />
          <RegistrationFields form={form} />
          <div class="actions">
            <button type="submit">Save</button>
          </div>
        </form>
      </section>
      <ConfirmForm
        action={`${path}/delete`}
        csrf={session.csrf}
        summary="Delete this registration…"
        text="Delete the registration? Launches from this LMS are refused from now on and its grade passback stops; the launch log stays. This cannot be undone."
        button="Delete registration"
      />
    </>
  );
}
