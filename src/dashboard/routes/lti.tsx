import type { Context, Hono } from "hono";
import type { Child } from "hono/jsx";
import { LAUNCH_KINDS, LAUNCH_STATUSES } from "../../db/schema";
import { listLaunches } from "../../domains/lti/launch/launch-log";
import { createRegistrationLink } from "../../domains/lti/registrations/dynamic/links";
import { CreateConsumerBody, UpdateConsumerBody } from "../../domains/lti/registrations/schemas";
import {
  type ConsumerRow,
  createConsumer,
  deleteConsumer,
  findConsumer,
  listConsumers,
  updateConsumer,
} from "../../domains/lti/registrations/service";
import type { AppEnv } from "../../env";
import { enforce, holdsAbility } from "../../platform/auth/policy";
import { sectionPage } from "../components";
import { fieldMessages, formOf, formRefusal, issuesOf, pageNumber } from "../forms";
import {
  LAUNCHES_PATH,
  NewRegistration,
  NOTICES,
  PER_PAGE,
  RegistrationDetail,
  RegistrationList,
  registrationPath,
} from "../pages/lti";
import {
  bodyOf,
  EMPTY_FORM,
  formOfPost,
  formOfRegistration,
  LABELS,
  type RegistrationForm,
} from "../pages/lti-form";
import { LaunchLog } from "../pages/lti-launches";
import { LTI_PATH } from "../prefixes";
import { checkCsrf, signedIn } from "../session";

const SECTION = "lti";

function page(c: Context<AppEnv>, title: string, children: Child, status = 200) {
  return sectionPage(c, { title, section: SECTION, crumbs: "Settings → Integrations", status }, children);
}

async function renderList(c: Context<AppEnv>, link?: { url: string; expires_at: string }, status = 200) {
  const session = c.var.dashboard;
  const pageNo = pageNumber(c.req.query("page"));
  const { rows, total } = await listConsumers(session.ctx, { page: pageNo, per_page: PER_PAGE });
  return page(
    c,
    "LTI",
    <RegistrationList
      session={session}
      rows={rows}
      total={total}
      page={pageNo}
      notice={NOTICES[c.req.query("notice") ?? ""]}
      link={link}
    />,
    status,
  );
}

function renderDetail(
  c: Context<AppEnv>,
  row: ConsumerRow,
  options: { form?: RegistrationForm; errors?: string[]; status?: number } = {},
) {
  return page(
    c,
    row.name,
    <RegistrationDetail
      session={c.var.dashboard}
      row={row}
      origin={new URL(c.req.url).origin}
      form={options.form ?? formOfRegistration(row)}
      errors={options.errors ?? []}
      notice={NOTICES[c.req.query("notice") ?? ""]}
    />,
    options.status,
  );
}

/**
 * Settings → Integrations → LTI: the LTI domain's registrations, registration links and launch log
 * behind the abilities of `/api/integrations/lti-consumers` and `/api/integrations/lti-launches`.
 */
export function registerLti(app: Hono<AppEnv>) {
  app.get(LTI_PATH, signedIn, (c) => {
    enforce(holdsAbility(c.var.dashboard.principal, "lti:read"));
    return renderList(c);
  });

  app.post(`${LTI_PATH}/registration-link`, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "lti:write"));
    const link = await createRegistrationLink(session.ctx, { origin: new URL(c.req.url).origin });
    return renderList(c, link, 201);
  });

  const newForm = (c: Context<AppEnv>, form: RegistrationForm, errors: string[], status = 200) =>
    page(
      c,
      "Add an LTI registration",
      <NewRegistration session={c.var.dashboard} form={form} errors={errors} />,
      status,
    );

  app.get(`${LTI_PATH}/new`, signedIn, (c) => {
    enforce(holdsAbility(c.var.dashboard.principal, "lti:write"));
    return newForm(c, EMPTY_FORM, []);
  });

  app.post(LTI_PATH, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "lti:write"));
    const form = formOfPost(await formOf(c));
    const { auth_token_audience, ...body } = bodyOf(form);
    const parsed = CreateConsumerBody.safeParse(
      auth_token_audience ? { ...body, auth_token_audience } : body,
    );
    if (!parsed.success) return newForm(c, form, fieldMessages(issuesOf(parsed.error.issues), LABELS), 422);
    let row: ConsumerRow;
    try {
      row = await createConsumer(session.ctx, parsed.data);
    } catch (error) {
      const refused = formRefusal(error, LABELS);
      if (!refused) throw error;
      return newForm(c, form, refused.messages, refused.status);
    }
    return c.redirect(`${registrationPath(row.id)}?notice=created`, 303);
  });

  app.get(LAUNCHES_PATH, signedIn, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "lti:read"));
    const pageNo = pageNumber(c.req.query("page"));
    const status = LAUNCH_STATUSES.find((s) => s === c.req.query("status"));
    const kind = LAUNCH_KINDS.find((k) => k === c.req.query("kind"));
    const consumer = (c.req.query("consumer_id") ?? "").trim();
    const [{ rows, total }, registrations] = await Promise.all([
      listLaunches(session.ctx, {
        filters: { status, kind, ...(consumer ? { consumer_id: consumer } : {}) },
        page: { page: pageNo, per_page: PER_PAGE },
      }),
      listConsumers(session.ctx, { page: 1, per_page: 100 }),
    ]);
    return page(
      c,
      "LTI launch log",
      <LaunchLog
        rows={rows}
        total={total}
        page={pageNo}
        filters={{ status: status ?? "", kind: kind ?? "", consumer }}
        registrations={registrations.rows}
      />,
    );
  });

  app.get(`${LTI_PATH}/registrations/:id`, signedIn, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "lti:read"));
    return renderDetail(c, await findConsumer(session.ctx, c.req.param("id")));
  });

  app.post(`${LTI_PATH}/registrations/:id`, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "lti:write"));
    const row = await findConsumer(session.ctx, c.req.param("id"));
    const form = formOfPost(await formOf(c));
    const parsed = UpdateConsumerBody.safeParse(bodyOf(form));
    if (!parsed.success)
      return renderDetail(c, row, {
        form,
        errors: fieldMessages(issuesOf(parsed.error.issues), LABELS),
        status: 422,
      });
    try {
      await updateConsumer(session.ctx, { id: row.id, body: parsed.data });
    } catch (error) {
      const refused = formRefusal(error, LABELS);
      if (!refused || refused.status === 404) throw error;
      return renderDetail(c, row, { form, errors: refused.messages, status: refused.status });
    }
    return c.redirect(`${registrationPath(row.id)}?notice=saved`, 303);
  });

  app.post(`${LTI_PATH}/registrations/:id/delete`, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "lti:write"));
    await deleteConsumer(session.ctx, c.req.param("id"));
    return c.redirect(`${LTI_PATH}?notice=deleted`, 303);
  });
}
