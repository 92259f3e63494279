import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerListDeepLinkingItems } from "./deep-linking/routes/list-deep-linking-items";
import { registerLtiDeepLinkingResponse } from "./deep-linking/routes/lti-deep-linking-response";
import { registerLtiDeepLinkingSelectionPage } from "./deep-linking/routes/lti-deep-linking-selection-page";
import { registerCreateLtiLineItem } from "./grades/routes/create-lti-line-item";
import { registerGradePassback } from "./grades/routes/grade-passback";
import { registerListLtiLineItems } from "./grades/routes/list-lti-line-items";
import { registerExchangeLtiCode } from "./launch/routes/exchange-lti-code";
import { registerGetLtiLaunch } from "./launch/routes/get-lti-launch";
import { registerListLtiLaunches } from "./launch/routes/list-lti-launches";
import { registerLtiLaunchCallback } from "./launch/routes/lti-launch-callback";
import { registerLtiLaunchPage } from "./launch/routes/lti-launch-page";
import { registerLtiLogin } from "./launch/routes/lti-login";
import { registerLtiRegistrationLaunchCallback } from "./launch/routes/lti-registration-launch-callback";
import { registerLtiRegistrationLogin } from "./launch/routes/lti-registration-login";
import { registerCreateLtiConsumer } from "./registrations/routes/create-lti-consumer";
import { registerCreateLtiRegistrationLink } from "./registrations/routes/create-lti-registration-link";
import { registerDeleteLtiConsumer } from "./registrations/routes/delete-lti-consumer";
import { registerGetLtiConsumer } from "./registrations/routes/get-lti-consumer";
import { registerGetLtiJwks } from "./registrations/routes/get-lti-jwks";
import { registerListLtiConsumers } from "./registrations/routes/list-lti-consumers";
import { registerLtiDynamicRegistration } from "./registrations/routes/lti-dynamic-registration";
import { registerRotateLtiKeys } from "./registrations/routes/rotate-lti-keys";
import { registerUpdateLtiConsumer } from "./registrations/routes/update-lti-consumer";
import { registerGetLtiLaunchMemberSync } from "./roster/routes/get-lti-launch-member-sync";
import { registerListLtiLaunchMembers } from "./roster/routes/list-lti-launch-members";
import { registerSyncLtiLaunchMembers } from "./roster/routes/sync-lti-launch-members";

/**
 * The LTI 1.3 tool, in three parts: registrations/ (the platforms an institution registers, and the
 * tool's own signing keys per registration), launch/ (OIDC login, the id_token's verification, the
 * user and session a launch makes, the launch log), deep-linking/ (choosing content to link into the
 * platform: the items, the signed response, the selection page) and grade passback. The order is the OpenAPI
 * document's.
 */
export function registerLti(app: OpenAPIHono<AppEnv>) {
  // Registrations and keys.
  registerGetLtiJwks(app);
  registerRotateLtiKeys(app);
  registerListLtiConsumers(app);
  registerCreateLtiConsumer(app);
  // Dynamic registration: the link (before `…/{id}`, see its route file), then the page the LMS opens.
  registerCreateLtiRegistrationLink(app);
  registerGetLtiConsumer(app);
  registerUpdateLtiConsumer(app);
  registerDeleteLtiConsumer(app);
  registerLtiDynamicRegistration(app);
  // Launch.
  registerLtiLogin(app);
  registerLtiRegistrationLogin(app);
  registerLtiLaunchCallback(app);
  registerLtiRegistrationLaunchCallback(app);
  registerLtiLaunchPage(app);
  registerExchangeLtiCode(app);
  registerListLtiLaunches(app);
  registerGetLtiLaunch(app);
  // Deep linking.
  registerLtiDeepLinkingSelectionPage(app);
  registerListDeepLinkingItems(app);
  registerLtiDeepLinkingResponse(app);
  // Grades.
  registerGradePassback(app);
  registerListLtiLineItems(app);
  registerCreateLtiLineItem(app);
  // Roster (Names and Role Provisioning).
  registerListLtiLaunchMembers(app);
  registerSyncLtiLaunchMembers(app);
  registerGetLtiLaunchMemberSync(app);
}
