import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../../env";
import type { ServiceContext } from "../service/context";
import { useInstitutionDatabase } from "../service/directory";

/**
 * Requests that name their institution in the path (`/api/institutions/{id}` and everything below
 * it) run in that institution's database (design/multi-database.md#platform-wide-reads). A member's
 * request is there already (its token's principal carries its database); platform staff's, which
 * start in `DB`, and public requests (an IdP fetching the institution's keys or metadata), which
 * carry no principal, are moved here, before the route's handler. One mechanism for every route of
 * the family: `admitToken` calls `enterInstitutionOfPath` for a principal without an institution, and
 * `publicRoute` adds `inInstitutionOfPath` to a public operation whose path names one.
 */

/** The path template of the family, as the OpenAPI document writes it. */
export const INSTITUTION_PATH_TEMPLATE = /^\/api\/institutions\/\{id\}(?:\/|$)/;

const INSTITUTION_PATH = /^\/api\/institutions\/([^/]+)(?:\/|$)/;

/** The institution a request's path names, or null (`/api/institutions` itself names none). */
export function institutionOfPath(path: string): string | null {
  const match = INSTITUTION_PATH.exec(path);
  if (!match?.[1]) return null;
  try {
    return decodeURIComponent(match[1]);
  } catch {
    // A malformed escape names no institution; the route answers it as it would anywhere.
    return null;
  }
}

/**
 * Moves `ctx` to the database of the institution `path` names, if it names one (an unknown one
 * has no directory entry: `DB`, where the route answers 404 as before). One directory read per
 * institution per isolate every few seconds (placements are cached).
 */
export async function enterInstitutionOfPath(ctx: ServiceContext, path: string): Promise<void> {
  const id = institutionOfPath(path);
  if (id) await useInstitutionDatabase(ctx, id);
}

/** The same for a public operation's request, whose context has no principal. */
export const inInstitutionOfPath = createMiddleware<AppEnv>(async function inInstitutionOfPath(c, next) {
  await enterInstitutionOfPath(c.get("ctx"), c.req.path);
  await next();
});

/** Whether an operation's path template is of the family (`publicRoute` adds the middleware then). */
export function namesInstitution(pathTemplate: string): boolean {
  return INSTITUTION_PATH_TEMPLATE.test(pathTemplate);
}
