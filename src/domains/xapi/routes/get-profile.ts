import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { publicRoute } from "../../../platform/openapi";
import { XAPI_PROFILE } from "../prefixes";
import { profileDocument, XapiProfileSchema } from "../profile-document";

/** A day: the profile changes only with a release, and then by a new version. */
const CACHE_CONTROL = "public, max-age=86400";

export const getProfileRoute = publicRoute({
  method: "get",
  path: XAPI_PROFILE,
  tags: ["xAPI"],
  operationId: "getXapiProfile",
  summary: "The Lingua xAPI profile (no token)",
  description:
    "The xAPI profile of the statements Lingua forwards to a Learning Record Store, as a JSON-LD document in the shape of the xAPI Profiles specification 1.0: the verb, activity types and extensions Lingua coins, each defined with its IRI (a fragment of this document's URL, such as `/xapi/profile#earned`), and a statement template per kind of statement. Readable from any origin; cacheable for a day.",
  responses: {
    200: {
      description: "The profile.",
      content: {
        "application/ld+json": { schema: XapiProfileSchema },
        "application/json": { schema: XapiProfileSchema },
      },
      headers: {
        "Cache-Control": { description: `Always \`${CACHE_CONTROL}\`.`, schema: { type: "string" } },
        "Access-Control-Allow-Origin": {
          description: "`*`: readable from any web page.",
          schema: { type: "string" },
        },
      },
    },
  },
});

export function registerGetProfile(app: OpenAPIHono<AppEnv>) {
  app.openapi(getProfileRoute, (c) => {
    const document = profileDocument(c.get("ctx").config.publicBaseUrl);
    // JSON-LD unless the client asks for plain JSON only.
    const accept = c.req.header("Accept") ?? "";
    const plain = /application\/json/i.test(accept) && !/application\/ld\+json/i.test(accept);
    return c.json(document, 200, {
      "Content-Type": plain ? "application/json; charset=utf-8" : "application/ld+json; charset=utf-8",
      "Cache-Control": CACHE_CONTROL,
      "Access-Control-Allow-Origin": "*",
    });
  });
}
