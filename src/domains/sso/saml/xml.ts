// The XML libraries of SAML, loaded on first use: only the ACS reads XML signatures, and xmldsigjs
// brings pkijs and asn1js with it, which every other request's isolate would pay for at start.
import type * as XmlDom from "@xmldom/xmldom";
import type * as XmlDsig from "xmldsigjs";

export interface XmlLibraries {
  xmldsig: typeof XmlDsig;
  xmldom: typeof XmlDom;
}

let loaded: Promise<XmlLibraries> | undefined;

/**
 * xmldsigjs and @xmldom/xmldom, with xmldsigjs told to use xmldom: workerd has no DOMParser or
 * XMLSerializer of its own (xmldsigjs builds its elements through them). Web Crypto is workerd's.
 */
export function loadXmlDsig(): Promise<XmlLibraries> {
  loaded ??= Promise.all([import("xmldsigjs"), import("@xmldom/xmldom"), import("xml-core")]).then(
    ([xmldsig, xmldom, core]) => {
      core.setNodeDependencies({
        DOMParser: xmldom.DOMParser,
        XMLSerializer: xmldom.XMLSerializer,
        DOMImplementation: xmldom.DOMImplementation,
      });
      return { xmldsig, xmldom };
    },
  );
  // A failed import is not remembered: the next sign-in tries again.
  loaded.catch(() => {
    loaded = undefined;
  });
  return loaded;
}
