/**
 * SAML's reasons for refusing a sign-in, with what each means: part of the SSO log's one vocabulary
 * (SSO_REFUSAL_REASONS in ../refusal.ts lists them with the other protocols'). No imports.
 */
export const SAML_REFUSAL_MEANINGS = {
  saml_malformed:
    "the post carries no `SAMLResponse`, or it is not base64 of a well-formed SAML 2.0 Response (a DOCTYPE, a missing element, markup inside a value)",
  saml_encrypted_assertion:
    "the assertion is encrypted (`EncryptedAssertion`): turn assertion encryption off at the IdP",
  saml_idp_error:
    "the IdP's Response says it did not sign the person in (a status other than `Success`); `detail` carries it",
  saml_unsigned: "neither the Response nor its assertion is signed",
  saml_wrapped:
    "the Response's shape is what signature-wrapping attacks build: more than one assertion, one outside its place, an ID twice, a Signature elsewhere, or a signature that does not reference the element it sits in",
  saml_algorithm_refused:
    "the signature uses SHA-1 (signature or digest), another canonicalisation than exclusive c14n, or other transforms",
  saml_unknown_certificate:
    "the Response is signed with a certificate that is not in the SSO settings (`detail` has its SHA-256 fingerprint): a rotation not yet entered, or a forgery",
  saml_bad_signature:
    "the signature does not verify with the configured certificates, or the signed content was changed",
  saml_comment_in_value:
    "an XML comment inside the NameID or another value read (the comment-truncation attack)",
  saml_wrong_issuer: "the Issuer is not the configured `saml.idp_entity_id`",
  saml_wrong_destination: "the Response's `Destination` or the assertion's `Recipient` is not our ACS URL",
  saml_wrong_audience: "the assertion's `Audience` is not our entity id",
  saml_not_yet_valid: "the assertion's `NotBefore` is in the future (60 s of clock skew allowed)",
  saml_expired: "the assertion's `NotOnOrAfter` has passed (60 s of clock skew allowed)",
  saml_wrong_request:
    "`InResponseTo` is not the ID of the sign-in's AuthnRequest (or is set on an IdP-initiated Response)",
  saml_unsolicited:
    "an IdP-initiated Response (answering no request of ours) while `saml.idp_initiated` is off",
  saml_replayed: "this assertion was used to sign in already",
  saml_attribute_missing:
    "the assertion carries no e-mail address: neither the attribute mapped to `email` nor an e-mail NameID",
} as const;

export type SamlRefusalReason = keyof typeof SAML_REFUSAL_MEANINGS;
export const SAML_REFUSAL_REASONS = Object.keys(SAML_REFUSAL_MEANINGS) as SamlRefusalReason[];
