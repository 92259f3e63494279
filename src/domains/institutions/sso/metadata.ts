import { derBase64ToPem } from "./certificates";

export interface IdpMetadata {
  idp_entity_id: string | null;
  sso_url: string | null;
  certificates: string[];
}

const BINDING_PREFERENCE = [
  "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect",
  "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST",
];

type Node = Record<string, unknown>;

function list(value: unknown): Node[] {
  if (value === undefined || value === null) return [];
  return (Array.isArray(value) ? value : [value]) as Node[];
}

function text(value: unknown): string | null {
  if (typeof value === "string") return value.trim() || null;
  if (value && typeof value === "object" && "#text" in value) return text((value as Node)["#text"]);
  return null;
}

function findIdpEntity(root: Node): Node | null {
  for (const entity of list(root.EntityDescriptor)) if (entity.IDPSSODescriptor) return entity;
  for (const group of list(root.EntitiesDescriptor)) {
    const found = findIdpEntity(group);
    if (found) return found;
  }
  return null;
}

/**
 * An IdP's SAML 2.0 metadata (an EntityDescriptor, possibly inside EntitiesDescriptor): its entity id,
 * single sign-on URL (HTTP-Redirect, else HTTP-POST binding) and signing certificates. Null when the
 * text is not XML or holds no IdP descriptor. Entities are not expanded, so external references in a
 * hostile document go nowhere.
 */
export async function parseIdpMetadata(xml: string): Promise<IdpMetadata | null> {
  // Loaded on first use: only SSO settings read XML.
  const { XMLParser } = await import("fast-xml-parser");
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: "@",
    removeNSPrefix: true,
    processEntities: false,
  });
  let root: Node;
  try {
    root = parser.parse(xml, true) as Node;
  } catch {
    return null;
  }
  const entity = findIdpEntity(root);
  if (!entity) return null;
  const idp = list(entity.IDPSSODescriptor)[0] ?? {};
  const services = list(idp.SingleSignOnService);
  const service =
    BINDING_PREFERENCE.map((binding) => services.find((s) => s["@Binding"] === binding)).find(Boolean) ??
    services[0];
  const certificates = list(idp.KeyDescriptor)
    .filter((key) => key["@use"] !== "encryption")
    .flatMap((key) => list((key.KeyInfo as Node | undefined)?.X509Data))
    .flatMap((data) => list(data.X509Certificate).map(text))
    .filter((value): value is string => Boolean(value))
    .map(derBase64ToPem);
  return {
    idp_entity_id: text(entity["@entityID"]),
    sso_url: text(service?.["@Location"]),
    certificates: [...new Set(certificates)],
  };
}
