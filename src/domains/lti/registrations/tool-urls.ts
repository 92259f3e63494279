import { LTI } from "../prefixes";

/** The shared login URL (the fallback for platforms that cannot have one per registration). */
export const LOGIN_PATH = `${LTI}/login` as const;
/** The shared callback (redirect URI of the shared login); each registration's own is `{CALLBACK_PATH}/{id}`. */
export const CALLBACK_PATH = `${LTI}/callback` as const;
export const JWKS_PATH = `${LTI}/jwks` as const;

/** A registration's own callback path: its redirect URI and launch URL. */
export function registrationCallbackPath(consumerId: string): string {
  return `${CALLBACK_PATH}/${consumerId}`;
}

/**
 * The URLs an LMS administrator pastes into the platform, absolute on this API's origin. All three
 * name the registration: a login through its login URL goes to that registration only and asks the
 * platform to post the id_token to its own redirect URI (which the platform checks against its
 * configuration), whose callback redeems only that registration's logins; the key set holds that
 * registration's keys only.
 */
export function toolUrls(origin: string, consumerId: string) {
  const callback = origin + registrationCallbackPath(consumerId);
  return {
    login_url: `${origin}${LOGIN_PATH}/${consumerId}`,
    launch_url: callback,
    jwks_url: `${origin}${JWKS_PATH}/${consumerId}`,
    redirect_uris: [callback],
  };
}

/** Dynamic registration's page (`GET /api/lti/register`), which a registration link opens. */
export const REGISTER_PATH = `${LTI}/register` as const;
