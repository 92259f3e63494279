import type { z } from "zod";
import type { TokenSchema } from "../../domains/tokens/schemas";
import { nowIso } from "../../platform/ids";
import { Col, ConfirmForm, EmptyState, ListTable, Notice } from "../components";
import { CodeBadges, When } from "../layout";
import { TOKENS_PATH } from "../prefixes";
import type { DashboardSession } from "../session";

/**
 * The API tokens section's list and what its pages share; token-form.tsx holds the form and the
 * created token's page, routes/tokens.tsx the handlers.
 */

export type TokenRow = z.infer<typeof TokenSchema>;

export const PER_PAGE = 25;
export const SECTION = "tokens";
const CRUMBS = "Settings → Integrations";

export function Crumbs() {
  return <p class="crumbs">{CRUMBS}</p>;
}

export function AbilityBadges({ abilities }: { abilities: readonly string[] }) {
  return <CodeBadges names={abilities} everything="Everything your role allows" />;
}

export function TokenList({
  session,
  rows,
  total,
  page,
  notice,
}: {
  session: DashboardSession;
  rows: TokenRow[];
  total: number;
  page: number;
  notice?: string;
}) {
  const now = nowIso(session.ctx.now());
  return (
    <>
      <Crumbs />
      <h1>API tokens</h1>
      <Notice text={notice} />
      <p>
        Tokens let your systems call the Lingua API as <code>Authorization: Bearer lng_…</code>.
        {session.principal.institution
          ? " You see every API token of your institution."
          : " Platform staff tokens belong to you, not to an institution."}
      </p>
      <div class="actions">
        <a class="button" href={`${TOKENS_PATH}/new`}>
          Create token
        </a>
      </div>
      <ListTable
        label="API tokens"
        caption={`Active API tokens (${total})`}
        count={rows.length}
        total={total}
        path={TOKENS_PATH}
        page={page}
        perPage={PER_PAGE}
        empty={
          <EmptyState title="No API tokens yet">
            <p>Create a token for each system that calls the API, with only the abilities it needs.</p>
          </EmptyState>
        }
        head={
          <>
            <Col>Name</Col>
            <Col>Abilities</Col>
            <Col>Token</Col>
            <Col>Created</Col>
            <Col>Last used</Col>
            <Col>Expires</Col>
            <Col hidden>Actions</Col>
          </>
        }
        rows={rows.map((t) => (
          <tr>
            <th scope="row">
              {t.name}
              {t.user_id !== session.principal.user.id ? (
                <span class="hint">
                  {" "}
                  (created by <code>{t.user_id}</code>)
                </span>
              ) : null}
            </th>
            <td>
              <AbilityBadges abilities={t.abilities} />
            </td>
            <td>
              <code>{t.prefix}…</code>
            </td>
            <td>
              <When iso={t.created_at} />
            </td>
            <td>
              <When iso={t.last_used_at} never="Never" />
            </td>
            <td>
              <When iso={t.expires_at} never="Never" />
              {t.expires_at && t.expires_at <= now ? <span class="badge warn">Expired</span> : null}
            </td>
            <td>
              <ConfirmForm
                action={`${TOKENS_PATH}/${encodeURIComponent(t.id)}/revoke`}
                csrf={session.csrf}
                summary="Revoke…"
                text={`Revoke “${t.name}”? Requests with it are refused at once. This cannot be undone.`}
                button="Revoke token"
              />
            </td>
          </tr>
        ))}
      />
    </>
  );
}
