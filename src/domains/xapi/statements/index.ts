import type { XapiActivity, XapiActorFormat } from "../../../db/schema";
import type { ServiceContext } from "../../../platform/service/context";
import { type Fact, factKey, factUser } from "./facts";

export { type Fact, factKey, factUser } from "./facts";

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
}

/**
 * The statements of `facts` for one endpoint, in the facts' order; what they refer to (items,
 * lessons, courses, learners) is read in one go. A fact whose subject is gone (a deleted learner or
 * course) is left out.
 *
 * PLACEHOLDER until statements/build.ts lands: a minimal statement of the right shape.
 */
export async function buildStatements(
  ctx: ServiceContext,
  target: StatementTarget,
  facts: readonly Fact[],
): Promise<BuiltStatement[]> {
  const base = ctx.config.publicBaseUrl;
  return Promise.all(
    facts.map(async (fact) => {
      const id = await placeholderId(`${target.id}:${factKey(fact)}`);
      const activityId = `${base}/xapi/activities/${fact.verb}/${encodeURIComponent(factKey(fact))}`;
      const occurredAt = fact.verb === "answered" ? fact.attempt.occurredAt : fact.at;
      return {
        id,
        verb: fact.verb,
        activityId,
        userId: factUser(fact),
        occurredAt,
        statement: {
          id,
          actor: { objectType: "Agent", account: { homePage: base, name: factUser(fact) } },
          verb: { id: `http://adlnet.gov/expapi/verbs/${fact.verb}`, display: { "en-US": fact.verb } },
          object: { objectType: "Activity", id: activityId },
          timestamp: occurredAt,
        },
      };
    }),
  );
}

async function placeholderId(name: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-1", new TextEncoder().encode(name)));
  const hex = [...digest.slice(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
