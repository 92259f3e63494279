import type { SamlSettings, SsoMapping } from "../../../db/schema";
import type { ServiceContext } from "../../../platform/service/context";
import { serviceProvider } from "../../institutions/sso/present";
import { activeConnection } from "../../institutions/sso/service";
import { completeSsoSignIn, type SignedIn, type SsoIdentity, underSignInLog } from "../complete";
import { type ActiveConnection, activeFrom, connectionReads } from "../connection";
import { takeRequest } from "../pending";
import { SsoRefusal } from "../refusal";
import { acceptOnceStatements, firstTime } from "./replay";
import {
  decodePostBinding,
  inResponseToOf,
  SamlRefused,
  type VerifiedAssertion,
  verifySamlResponse,
} from "./verify";

/** The IdP's post to our ACS (HTTP-POST binding). */
export interface AcsForm {
  SAMLResponse?: string;
  RelayState?: string;
}

const EMAIL = /^[^@\s]+@[^@\s]+$/;

function firstValue(attributes: Record<string, string[]>, name: string | null): string | null {
  if (!name) return null;
  return attributes[name]?.find((value) => value !== "") ?? null;
}

/**
 * The person the assertion describes, through the connection's `attribute_mapping`: the subject is
 * the NameID; the e-mail the mapped attribute, else the NameID when it is an e-mail address.
 */
export function identityFromAssertion(mapping: SsoMapping, assertion: VerifiedAssertion): SsoIdentity {
  const mapped = firstValue(assertion.attributes, mapping.email);
  const email = mapped ?? (EMAIL.test(assertion.nameId) ? assertion.nameId : null);
  if (!email || !EMAIL.test(email) || email.length > 254)
    throw new SsoRefusal(
      "saml_attribute_missing",
      `The assertion carries no e-mail address: no \`${mapping.email}\` attribute${mapped ? " holding an address" : ""}, and the NameID is not one. Send the e-mail as the \`${mapping.email}\` attribute, or change attribute_mapping.email.`,
      false,
      { subject: assertion.nameId },
    );
  const values = (name: string | null) => (name ? (assertion.attributes[name] ?? null) : null);
  return {
    subject: assertion.nameId,
    email,
    name: firstValue(assertion.attributes, mapping.name),
    role: values(mapping.role),
    groups: values(mapping.groups),
  };
}

function refusal(error: unknown): unknown {
  return error instanceof SamlRefused ? new SsoRefusal(error.reason, error.detail) : error;
}

function settingsOf(active: ActiveConnection | null): SamlSettings {
  const saml = active?.connection.type === "saml" ? active.connection.saml : null;
  if (!saml?.idp_entity_id || saml.certificates.length === 0)
    throw new SsoRefusal("sso_inactive", "The institution's SAML sign-in is not active.");
  return saml;
}

/**
 * Our ACS (`/api/auth/sso/saml/{institution}/acs`): a Response that answers our AuthnRequest takes
 * the pending request its `RelayState` names (single use, this browser's cookie) and must carry its
 * ID as `InResponseTo`; one that answers nothing is IdP-initiated, accepted only when the institution
 * turned `idp_initiated` on. Then the verification (signature by a configured certificate, the one
 * signed assertion, every check: ./verify.ts), the replay cache, the attribute mapping and the end of
 * the sign-in. Every refusal is logged with its reason.
 */
export async function samlAcs(
  ctx: ServiceContext,
  input: {
    institutionId: string;
    form: AcsForm;
    origin: string;
    cookie: (state: string) => string | undefined;
  },
): Promise<SignedIn> {
  const { institutionId, form } = input;
  return underSignInLog(ctx, { institutionId, protocol: "saml" }, async () => {
    try {
      if (!form.SAMLResponse)
        throw new SsoRefusal("saml_malformed", "The post to the ACS carries no SAMLResponse.");
      const xml = decodePostBinding(form.SAMLResponse);
      // Which kind of sign-in this claims to be decides what it is checked against; the claim itself is
      // then verified (an IdP-initiated one must not answer any request, a solicited one ours).
      const solicited = (await inResponseToOf(xml)) !== null;
      // The settings in the same round trip as the pending request (IdP-initiated: on their own).
      const request = solicited
        ? await takeRequest(ctx, {
            state: form.RelayState,
            institutionId,
            protocol: "saml",
            cookie: input.cookie,
            alongside: connectionReads(ctx.db, institutionId),
          })
        : null;
      const active = request ? activeFrom(request.alongside) : await activeConnection(ctx, institutionId);
      const saml = settingsOf(active);
      if (!request && !saml.idp_initiated)
        throw new SsoRefusal(
          "saml_unsolicited",
          "The identity provider sent a sign-in nobody started here (IdP-initiated), and this institution accepts only sign-ins started at Lingua: start at Lingua, or turn on saml.idp_initiated.",
        );
      const sp = serviceProvider(input.origin, institutionId);
      const assertion = await verifySamlResponse(xml, {
        certificates: saml.certificates,
        idpEntityId: saml.idp_entity_id as string,
        acsUrl: sp.acs_url,
        spEntityId: sp.entity_id,
        requestId: request?.nonce ?? null,
        nowMs: ctx.now(),
      });
      const identity = identityFromAssertion(saml.attribute_mapping, assertion);
      // The replay cache in the round trip that looks the member up.
      return await completeSsoSignIn(ctx, {
        institutionId,
        protocol: "saml",
        identity,
        active,
        first: {
          statements: acceptOnceStatements(ctx, {
            institutionId,
            assertionId: assertion.id,
            acceptableUntilMs: assertion.acceptableUntilMs,
          }),
          check: (results) => {
            if (!firstTime(results))
              throw new SsoRefusal(
                "saml_replayed",
                `The assertion ${assertion.id.slice(0, 80)} was used to sign in already; sign in again.`,
                false,
                { subject: identity.subject, email: identity.email.toLowerCase() },
              );
          },
        },
      });
    } catch (error) {
      throw refusal(error);
    }
  });
}
