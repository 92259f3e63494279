import type { XapiActivity, XapiActorFormat } from "../../../db/schema";
import type { ServiceContext } from "../../../platform/service/context";
import { buildStatement, type XapiStatement } from "./build";
import { type Fact, factKey, factUser } from "./facts";
import { statementId } from "./ids";
import { loadReferences, type References } from "./references";
import { statementText } from "./text";

export type { XapiStatement } from "./build";
export {
  type AttemptFact,
  type Fact,
  factKey,
  factUser,
  restoreFact,
  type StoredFact,
  storedAttemptId,
  storedFact,
} from "./facts";
export { STATEMENT_ID_NAMESPACE, statementId } from "./ids";
export { noReferences, type References } from "./references";

/** What building a statement needs to know of the endpoint it is for. */
export interface StatementTarget {
  id: string;
  actorFormat: XapiActorFormat;
}

/** A statement ready to be stored and sent, with the columns of the forwarding log. */
export interface BuiltStatement {
  /** The statement's UUID: the same for the same fact and endpoint, always. */
  id: string;
  verb: XapiActivity;
  /** The object's activity IRI. */
  activityId: string;
  userId: string;
  /** The statement's `timestamp`. */
  occurredAt: string;
  /** The xAPI statement (no `stored`, no `authority`, no `version`). */
  statement: Record<string, unknown>;
  /** `statement` as JSON text, made once: what the first attempt sends. */
  body: string;
  /** What it was built from: a batch keeps it (`storedFact`) to build it again for a later attempt. */
  fact: Fact;
}

/**
 * The statements of `facts` for one endpoint, in the facts' order; what they refer to (items,
 * lessons, courses, learners) is read in one D1 round trip (statements/references.ts), only what
 * `known` does not hold yet when given (an offer's earlier commits' references). A fact whose
 * subject is gone (a deleted learner, item, lesson or course) is left out. The statement id is the
 * UUIDv5 of the endpoint and the fact (statements/ids.ts); the statement itself is built by
 * statements/build.ts.
 */
export async function buildStatements(
  ctx: ServiceContext,
  target: StatementTarget,
  facts: readonly Fact[],
  known?: References,
): Promise<BuiltStatement[]> {
  if (facts.length === 0) return [];
  const refs = await loadReferences(ctx, facts, known);
  const out: BuiltStatement[] = [];
  for (const fact of facts) {
    const id = statementId(target.id, factKey(fact));
    const built = buildStatement(fact, refs, {
      baseUrl: ctx.config.publicBaseUrl,
      actorFormat: target.actorFormat,
      id,
    });
    if (!built) continue;
    out.push({
      id,
      verb: fact.verb,
      activityId: built.activityId,
      userId: factUser(fact),
      occurredAt: built.occurredAt,
      statement: built.statement as XapiStatement & Record<string, unknown>,
      body: statementText(built.statement),
      fact,
    });
  }
  return out;
}
