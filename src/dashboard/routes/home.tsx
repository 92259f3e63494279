import type { Hono } from "hono";
import { getInstitution, listInstitutions } from "../../domains/institutions/service";
import type { AppEnv } from "../../env";
import { enforce, holdsAbility } from "../../platform/auth/policy";
import { useInstitutionDatabase } from "../../platform/service/directory";
import { field, formOf, pageNumber } from "../forms";
import { html, setChosenInstitutionCookie } from "../http";
import { CsrfField, Layout } from "../layout";
import { Pager } from "../pager";
import { choosesInstitution, mayChooseInstitution } from "../policy";
import { DASHBOARD, INSTITUTIONS_PATH } from "../prefixes";
import { SECTIONS } from "../sections";
import { checkCsrf, signedIn } from "../session";

const INSTITUTIONS_PER_PAGE = 25;

/** The overview, and platform staff's choice of institution. */
export function registerHome(app: Hono<AppEnv>) {
  app.get(DASHBOARD, signedIn, (c) => {
    const session = c.var.dashboard;
    const staff = choosesInstitution(session.principal);
    return html(
      c,
      <Layout title="Overview" nonce={c.var.nonce} session={session} current="home">
        <h1>Welcome, {session.principal.user.name}</h1>
        {staff && !session.institution ? (
          <div class="card">
            <h2>Choose an institution</h2>
            <p>
              You are platform staff: choose the institution whose settings you want to look after. Your own
              API tokens are yours, not an institution's.
            </p>
            <p>
              <a class="button" href={INSTITUTIONS_PATH}>
                Choose an institution
              </a>
            </p>
          </div>
        ) : null}
        {SECTIONS.map((s) => (
          <div class="card">
            <p class="crumbs">{s.group}</p>
            <h2>
              <a href={s.path}>{s.label}</a>
            </h2>
            <p>{s.summary}</p>
          </div>
        ))}
      </Layout>,
    );
  });

  app.get(INSTITUTIONS_PATH, signedIn, async (c) => {
    const session = c.var.dashboard;
    enforce(mayChooseInstitution(session.principal));
    enforce(holdsAbility(session.principal, "institutions:read"));
    const page = pageNumber(c.req.query("page"));
    const q = (c.req.query("q") ?? "").trim().slice(0, 100);
    const { rows, total } = await listInstitutions(session.ctx, {
      page: { page, per_page: INSTITUTIONS_PER_PAGE },
      ...(q ? { q } : {}),
    });
    return html(
      c,
      <Layout title="Choose an institution" nonce={c.var.nonce} session={session} current="institutions">
        <h1>Choose an institution</h1>
        <form method="get" action={INSTITUTIONS_PATH}>
          <label for="q">Search by name or slug</label>
          <input id="q" name="q" type="search" value={q} maxlength={100} />
          <div class="actions">
            <button type="submit" class="secondary">
              Search
            </button>
          </div>
        </form>
        {rows.length === 0 ? (
          <div class="card empty">
            <p>{q ? `No institution matches “${q}”.` : "There are no institutions yet."}</p>
          </div>
        ) : (
          <section class="table-wrap" aria-label="Institutions" tabindex={0}>
            <table>
              <caption>Institutions ({total})</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Slug</th>
                  <th scope="col">Plan</th>
                  <th scope="col">Members</th>
                  <th scope="col">
                    <span class="visually-hidden">Action</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map(({ institution, memberCount }) => (
                  <tr>
                    <td>{institution.name}</td>
                    <td>
                      <code>{institution.slug}</code>
                    </td>
                    <td>{institution.plan}</td>
                    <td>{memberCount}</td>
                    <td>
                      <form method="post" action={`${INSTITUTIONS_PATH}/choose`}>
                        <CsrfField token={session.csrf} />
                        <input type="hidden" name="institution_id" value={institution.id} />
                        <button type="submit" class="secondary" aria-label={`Choose ${institution.name}`}>
                          {session.institution?.id === institution.id ? "Chosen" : "Choose"}
                        </button>
                      </form>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <Pager
              path={INSTITUTIONS_PATH}
              query={q ? { q } : {}}
              page={page}
              perPage={INSTITUTIONS_PER_PAGE}
              total={total}
            />
          </section>
        )}
      </Layout>,
    );
  });

  app.post(`${INSTITUTIONS_PATH}/choose`, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(mayChooseInstitution(session.principal));
    const chosen = field(await formOf(c), "institution_id");
    // Read where it lives; the institutions service answers 404 for one this caller may not act on.
    await useInstitutionDatabase(session.ctx, chosen);
    const { institution } = await getInstitution(session.ctx, chosen);
    const expires = session.principal.token.expiresAt;
    const maxAge = expires ? (Date.parse(expires) - session.ctx.now()) / 1000 : 30 * 86_400;
    setChosenInstitutionCookie(c, institution.id, maxAge);
    return c.redirect(DASHBOARD, 303);
  });
}
