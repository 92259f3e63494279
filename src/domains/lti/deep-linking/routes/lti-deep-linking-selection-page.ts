import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { publicRoute } from "../../../../platform/openapi";
import { errorResponses } from "../../../../platform/openapi-problems";
import { useInstitutionDatabase } from "../../../../platform/service/directory";
import { LTI_DEEP_LINKING } from "../../prefixes";
import { selectionErrorPage, selectionPage } from "../pages";
import { DeepLinkingLaunchParam, SelectionPageQuery } from "../schemas";
import { selectionTarget } from "../service";

const htmlPage = (description: string) => ({
  description,
  content: { "text/html": { schema: { type: "string" as const } } },
});

export const ltiDeepLinkingSelectionPageRoute = publicRoute({
  method: "get",
  path: `${LTI_DEEP_LINKING}/{launch}/select`,
  tags: ["LTI"],
  operationId: "ltiDeepLinkingSelectionPage",
  summary: "Deep-linking selection page",
  description:
    "Where a browser's deep-linking launch lands (303 from the callback, `#code=…` in the fragment; always this page, whatever `LTI_APP_URL` says). The page exchanges the code for the launch's session, lists the published courses and their lessons through `GET /api/lti/deep-linking/{launch}/items`, and sends the instructor's choice to `POST /api/lti/deep-linking/{launch}/response`, whose JWT it posts to the platform's return URL. Its Content-Security-Policy allows only its own nonce's script and style, requests to this API, forms to the return URL's origin, and framing by the platform's origins (the return URL's and the issuer's).",
  request: { params: DeepLinkingLaunchParam, query: SelectionPageQuery },
  responses: {
    200: htmlPage("The page."),
    404: {
      ...errorResponses[404],
      ...htmlPage(
        "No unanswered deep-linking launch of that id: a page saying to start again from the course.",
      ),
    },
  },
});

export function registerLtiDeepLinkingSelectionPage(app: OpenAPIHono<AppEnv>) {
  app.openAPIRegistry.registerPath(ltiDeepLinkingSelectionPageRoute);
  app.get(`${LTI_DEEP_LINKING}/:launch/select`, async (c) => {
    const launchId = c.req.param("launch");
    const ctx = c.get("ctx");
    // The launch is read where its institution lives (design/multi-database.md#entry-points).
    const institution = c.req.query("institution");
    if (institution) await useInstitutionDatabase(ctx, institution);
    const target = await selectionTarget(ctx, launchId);
    if (!target)
      return selectionErrorPage(404, "This content selection is unknown, or its content was chosen already.");
    return selectionPage({ launchId, ...target });
  });
}
