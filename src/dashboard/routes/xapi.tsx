import type { Context, Hono } from "hono";
import type { Child } from "hono/jsx";
import { XAPI_ACTIVITIES, XAPI_STATEMENT_STATUSES } from "../../db/schema";
import { CreateBackfillBody } from "../../domains/xapi/backfill/schemas";
import { getBackfill, listBackfills, startBackfill } from "../../domains/xapi/backfill/service";
import { listStatements } from "../../domains/xapi/forwarding-log";
import { endpointHealth, healthOf } from "../../domains/xapi/health";
import { xapiScope } from "../../domains/xapi/policy";
import { limitTestCalls } from "../../domains/xapi/routes/test-endpoint";
import { CreateXapiEndpointBody, UpdateXapiEndpointBody } from "../../domains/xapi/schemas";
import {
  createEndpoint,
  deleteEndpoint,
  type EndpointRow,
  findEndpoint,
  listEndpoints,
  updateEndpoint,
} from "../../domains/xapi/service";
import { testEndpoint } from "../../domains/xapi/test-call";
import type { AppEnv } from "../../env";
import { enforce, holdsAbility } from "../../platform/auth/policy";
import { dayProblem } from "../../platform/dates";
import { sectionPage } from "../components";
import { field, fieldMessages, formOf, formRefusal, issuesOf, pageNumber } from "../forms";
import { EndpointDetail, EndpointList, TestResultView } from "../pages/xapi";
import { Backfills, backfillStatus, ForwardingLog } from "../pages/xapi-activity";
import {
  bodyOf,
  EMPTY_FORM,
  type EndpointForm,
  endpointPath,
  formOfEndpoint,
  formOfPost,
  LABELS,
  LOG_PER_PAGE,
  NewEndpoint,
  NOTICES,
  PER_PAGE,
} from "../pages/xapi-form";
import { XAPI_PATH } from "../prefixes";
import { checkCsrf, signedIn } from "../session";

const SECTION = "xapi";
const BACKFILLS_SHOWN = 5;

function page(c: Context<AppEnv>, title: string, children: Child, status = 200) {
  return sectionPage(c, { title, section: SECTION, crumbs: "Settings → Integrations", status }, children);
}

/** The institution's endpoint of the URL, or the service's 404 (`xapiScope`: the API's tenancy rule). */
function endpointOf(c: Context<AppEnv>) {
  const { ctx, principal } = c.var.dashboard;
  return findEndpoint(ctx, { ...xapiScope(principal), id: c.req.param("id") ?? "" });
}

async function renderDetail(
  c: Context<AppEnv>,
  row: EndpointRow,
  options: { form?: EndpointForm; errors?: string[]; backfillErrors?: string[]; status?: number } = {},
) {
  const session = c.var.dashboard;
  const pageNo = pageNumber(c.req.query("page"));
  const status = XAPI_STATEMENT_STATUSES.find((s) => s === c.req.query("status"));
  const verb = XAPI_ACTIVITIES.find((v) => v === c.req.query("verb"));
  const [counts, log, backfills] = await Promise.all([
    healthOf(session.ctx, row.id),
    listStatements(session.ctx, {
      endpointId: row.id,
      status,
      verb,
      page: { page: pageNo, per_page: LOG_PER_PAGE },
    }),
    listBackfills(session.ctx, { endpointId: row.id, page: { page: 1, per_page: BACKFILLS_SHOWN } }),
  ]);
  return page(
    c,
    row.name,
    <EndpointDetail
      session={session}
      row={row}
      counts={counts}
      form={options.form ?? formOfEndpoint(row)}
      errors={options.errors ?? []}
      notice={NOTICES[c.req.query("notice") ?? ""]}
      log={
        <ForwardingLog
          row={row}
          rows={log.rows}
          total={log.total}
          page={pageNo}
          status={status}
          verb={verb}
        />
      }
      backfills={
        <Backfills
          session={session}
          row={row}
          backfills={backfills.rows}
          errors={options.backfillErrors ?? []}
        />
      }
    />,
    options.status,
  );
}

/**
 * Settings → Integrations → xAPI: the xAPI domain's endpoints (health, create, edit with write-only
 * secrets, delete), the test call, the forwarding log and back-fills, behind the abilities of
 * `/api/integrations/xapi-endpoints`.
 */
export function registerXapi(app: Hono<AppEnv>) {
  app.get(XAPI_PATH, signedIn, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "xapi:read"));
    const pageNo = pageNumber(c.req.query("page"));
    const { rows, total } = await listEndpoints(session.ctx, {
      ...xapiScope(session.principal),
      page: { page: pageNo, per_page: PER_PAGE },
    });
    const health = await endpointHealth(
      session.ctx,
      rows.map((r) => r.id),
    );
    return page(
      c,
      "xAPI",
      <EndpointList
        rows={rows}
        health={health}
        total={total}
        page={pageNo}
        notice={NOTICES[c.req.query("notice") ?? ""]}
      />,
    );
  });

  const newForm = (c: Context<AppEnv>, form: EndpointForm, errors: string[], status = 200) =>
    page(
      c,
      "Add an xAPI endpoint",
      <NewEndpoint session={c.var.dashboard} form={form} errors={errors} />,
      status,
    );

  app.get(`${XAPI_PATH}/new`, signedIn, (c) => {
    enforce(holdsAbility(c.var.dashboard.principal, "xapi:write"));
    xapiScope(c.var.dashboard.principal);
    return newForm(c, EMPTY_FORM, []);
  });

  app.post(XAPI_PATH, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "xapi:write"));
    const form = formOfPost(await formOf(c));
    const parsed = CreateXapiEndpointBody.safeParse(bodyOf(form));
    if (!parsed.success) return newForm(c, form, fieldMessages(issuesOf(parsed.error.issues), LABELS), 422);
    let row: EndpointRow;
    try {
      row = await createEndpoint(session.ctx, {
        owner: { ...xapiScope(session.principal), userId: session.principal.user.id },
        input: parsed.data,
      });
    } catch (error) {
      const refused = formRefusal(error, LABELS);
      if (!refused) throw error;
      return newForm(c, form, refused.messages, refused.status);
    }
    return c.redirect(`${endpointPath(row.id)}?notice=created`, 303);
  });

  app.get(`${XAPI_PATH}/:id`, signedIn, async (c) => {
    enforce(holdsAbility(c.var.dashboard.principal, "xapi:read"));
    return renderDetail(c, await endpointOf(c));
  });

  app.post(`${XAPI_PATH}/:id`, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "xapi:write"));
    const row = await endpointOf(c);
    const form = formOfPost(await formOf(c));
    const parsed = UpdateXapiEndpointBody.safeParse(bodyOf(form));
    if (!parsed.success)
      return renderDetail(c, row, {
        form,
        errors: fieldMessages(issuesOf(parsed.error.issues), LABELS),
        status: 422,
      });
    try {
      await updateEndpoint(session.ctx, { ...xapiScope(session.principal), id: row.id, input: parsed.data });
    } catch (error) {
      const refused = formRefusal(error, LABELS);
      if (!refused || refused.status === 404) throw error;
      return renderDetail(c, row, { form, errors: refused.messages, status: refused.status });
    }
    return c.redirect(`${endpointPath(row.id)}?notice=saved`, 303);
  });

  app.post(`${XAPI_PATH}/:id/test`, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "xapi:write"));
    const row = await endpointOf(c);
    await limitTestCalls(session.ctx, row.id);
    const result = await testEndpoint(session.ctx, row);
    return page(c, "Test call", <TestResultView row={row} result={result} />);
  });

  app.post(`${XAPI_PATH}/:id/backfills`, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "xapi:write"));
    const row = await endpointOf(c);
    const day = field(await formOf(c), "since");
    const problem = dayProblem(day);
    if (problem)
      return renderDetail(c, row, { backfillErrors: [`${LABELS.since}: ${problem}`], status: 422 });
    const parsed = CreateBackfillBody.safeParse({ since: `${day}T00:00:00Z` });
    if (!parsed.success)
      return renderDetail(c, row, {
        backfillErrors: fieldMessages(issuesOf(parsed.error.issues), LABELS),
        status: 422,
      });
    try {
      await startBackfill(session.ctx, {
        ...xapiScope(session.principal),
        endpointId: row.id,
        userId: session.principal.user.id,
        body: parsed.data,
      });
    } catch (error) {
      const refused = formRefusal(error, LABELS);
      if (!refused || refused.status === 404) throw error;
      return renderDetail(c, row, { backfillErrors: refused.messages, status: refused.status });
    }
    return c.redirect(`${endpointPath(row.id)}?notice=backfill`, 303);
  });

  // What the page's script polls while a back-fill runs.
  app.get(`${XAPI_PATH}/:id/backfills/:backfill/status`, signedIn, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "xapi:read"));
    const row = await endpointOf(c);
    const backfill = await getBackfill(session.ctx, { endpointId: row.id, id: c.req.param("backfill") });
    return c.json(backfillStatus(backfill));
  });

  app.post(`${XAPI_PATH}/:id/delete`, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "xapi:write"));
    await deleteEndpoint(session.ctx, { ...xapiScope(session.principal), id: c.req.param("id") });
    return c.redirect(`${XAPI_PATH}?notice=deleted`, 303);
  });
}
