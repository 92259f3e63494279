import { and, eq, gt, isNotNull, isNull } from "drizzle-orm";
import { ltiConsumers, ltiStates } from "../../../db/schema";
import type { ServiceContext } from "../../../platform/service/context";
import type { ConsumerRow } from "../registrations/service";
import { LaunchRefusal } from "./refusal";

/**
 * The browser binding of a launch (login CSRF): the callback must come back to the browser that
 * started the login. Two ways bind it: the login's state cookie, or, where the browser blocks
 * third-party cookies, the platform's storage (1EdTech LTI Client Side postMessage): the login's page
 * put the state and nonce into the platform's frame (`lti.put_data`), and the callback's page read
 * them back (`lti.get_data`) and posted them with the launch from Lingua's own origin. The state
 * row stays the truth; neither way carries anything the server does not check against it.
 */

/** The form fields the callback's storage page adds when it posts the launch back. */
export const STORAGE_FIELDS = {
  state: "platform_storage_state",
  nonce: "platform_storage_nonce",
  error: "platform_storage_error",
} as const;

/** The keys the values are stored under in the platform's frame (those of 1EdTech's example library). */
export const storageKeys = (state: string, nonce: string) => ({
  state: `lti_state_${state}`,
  nonce: `lti_nonce_${nonce}`,
});

/** What the callback's storage page posted, and whether Lingua's own page posted it. */
export interface StorageCheck {
  /** The post came from a page of this origin (`Origin`, and `Sec-Fetch-Site: same-origin` when sent). */
  fromToolPage: boolean;
  state?: string;
  nonce?: string;
  /** Why the page could not read them (`timeout`, the platform's error code, `not_found`). */
  error?: string;
}

/** The storage fields of a callback form, if it carries any. */
export function storageCheckOf(
  form: Record<string, string | undefined>,
  fromToolPage: boolean,
): StorageCheck | undefined {
  const state = form[STORAGE_FIELDS.state];
  const nonce = form[STORAGE_FIELDS.nonce];
  const error = form[STORAGE_FIELDS.error];
  if (state === undefined && nonce === undefined && error === undefined) return undefined;
  return { fromToolPage, state, nonce, error };
}

type StateRow = typeof ltiStates.$inferSelect;

/**
 * The state a platform's form post names, when its browser must still prove itself through the
 * platform's storage: unused, unexpired, issued for this callback, and its login offered storage.
 * Read only: the state is spent when the storage page posts the launch back. Anything else (no
 * such state, used, expired, another callback's, a login without storage) is null, and the
 * callback goes on to refuse it as it would.
 */
export async function pendingStorageCheck(
  ctx: ServiceContext,
  input: { state: string; registrationId: string | undefined },
): Promise<{ state: StateRow; consumer: ConsumerRow } | null> {
  const { registrationId } = input;
  const found = await ctx.db
    .select({ state: ltiStates, consumer: ltiConsumers })
    .from(ltiStates)
    .innerJoin(ltiConsumers, eq(ltiConsumers.id, ltiStates.consumerId))
    .where(
      and(
        eq(ltiStates.state, input.state),
        registrationId === undefined
          ? eq(ltiStates.registrationBound, false)
          : and(eq(ltiStates.consumerId, registrationId), eq(ltiStates.registrationBound, true)),
        isNull(ltiStates.usedAt),
        gt(ltiStates.expiresAt, ctx.now()),
        isNotNull(ltiStates.storageTarget),
      ),
    )
    .get();
  return found ?? null;
}

const NO_BINDING =
  "The launch carries neither this login's state cookie nor the platform-storage check: a launch must come back to the browser that started it (login CSRF protection). Launch again from the platform; if the browser blocks third-party cookies and the platform does not offer its storage (`lti_storage_target`), open the activity in a new window.";

/**
 * A callback without the state cookie is bound to the browser only by the platform-storage check of
 * Lingua's own page, reading back the values the login stored; anything else is refused.
 */
export function checkStorageBinding(
  check: StorageCheck | undefined,
  state: StateRow,
  consumer: ConsumerRow,
): void {
  if (!check) throw new LaunchRefusal("browser_binding_missing", NO_BINDING, consumer);
  if (!check.fromToolPage)
    throw new LaunchRefusal(
      "browser_binding_missing",
      `${NO_BINDING} (A platform-storage check was posted, but not by Lingua's own page.)`,
      consumer,
    );
  if (state.storageTarget === null)
    throw new LaunchRefusal(
      "platform_storage_mismatch",
      "The launch carries a platform-storage check, but its login did not offer platform storage (`lti_storage_target`).",
      consumer,
    );
  if (check.error !== undefined || check.state === undefined || check.nonce === undefined) {
    const code = (check.error ?? "missing").replace(/[^A-Za-z0-9_.-]/g, "").slice(0, 64) || "unknown";
    throw new LaunchRefusal(
      "platform_storage_failed",
      `Lingua's page could not read this login's state and nonce back from the platform's storage (\`${code}\`): the platform did not answer \`lti.get_data\`, or this browser did not start the login. Launch again from the platform; if it keeps failing, open the activity in a new window.`,
      consumer,
    );
  }
  if (check.state !== state.state || check.nonce !== state.nonce)
    throw new LaunchRefusal(
      "platform_storage_mismatch",
      "The state and nonce read from the platform's storage are not this login's: the launch did not come back to the browser that started it.",
      consumer,
    );
}
