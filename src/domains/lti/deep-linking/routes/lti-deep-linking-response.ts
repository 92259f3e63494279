import type { OpenAPIHono, RouteConfig } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { every } from "hono/combine";
import type { AppEnv } from "../../../../env";
import { ApiError, type FieldError, fieldErrorsFromZod, validationError } from "../../../../platform/errors";
import { principalContext } from "../../../../platform/http/context-middleware";
import { tokenRoute } from "../../../../platform/openapi";
import { errorResponses } from "../../../../platform/openapi-problems";
import { LTI_DEEP_LINKING } from "../../prefixes";
import { autoSubmitPage } from "../pages";
import { DeepLinkingLaunchParam, RESPONSE_FORM_SCHEMA, ResponseAnswerSchema, ResponseBody } from "../schemas";
import { platformOrigins, respond } from "../service";

export const ltiDeepLinkingResponseRoute = tokenRoute("content:read", {
  method: "post",
  path: `${LTI_DEEP_LINKING}/{launch}/response`,
  tags: ["LTI"],
  operationId: "ltiDeepLinkingResponse",
  summary: "Build a deep-linking launch's response",
  description: `Builds the \`LtiDeepLinkingResponse\` JWT for the chosen courses and lessons, signed RS256 with the registration's current key (published at its \`tool.jwks_url\`): \`iss\` the client id, \`aud\` the platform's issuer, \`nonce\`, \`iat\`/\`exp\` (10 minutes), \`deployment_id\`, \`message_type\`, \`version\`, the request's \`data\` echoed unchanged, and one \`ltiResourceLink\` content item per item (in order) whose \`url\` is the registration's launch URL with \`?course={id}\` or \`?lesson={id}\` and whose \`custom\` carries \`lingua_course_id\` or \`lingua_lesson_id\`, so the platform's later launches of the link open that course or lesson; \`lineItem\` (\`scoreMaximum\`, \`label\`, \`resourceId\` = the id, \`tag\`) when an item asks for one.

The body is JSON (\`{ "items": [...] }\`) or a form (\`application/x-www-form-urlencoded\`: repeated \`course_id\` / \`lesson_id\` fields, in order, and an optional \`score_maximum\` asking a line item for each). The answer follows \`Accept\`: \`application/json\` (or no \`text/html\`) gets \`{ return_url, jwt }\`; \`text/html\` without \`application/json\` (a browser) gets a page whose form posts the field \`JWT\` to the return URL by itself. Errors are problem+json.

One successful response per deep-linking launch: a second one is 409 \`lti_deep_linking_responded\` (also when two race). Items the platform's request does not accept (\`accept_types\` without \`ltiResourceLink\`, several items against \`accept_multiple: false\`, a \`line_item\` against \`accept_lineitem: false\`) are 422 \`lti_deep_linking_not_accepted\`; an item naming neither or both of \`course_id\` and \`lesson_id\`, or a course or lesson that is not published, 422 \`validation_failed\`: neither uses up the response. Only the launch's own session token may call it (another token: 403; not a succeeded deep-linking launch of the caller's institution: 404).`,
  request: {
    params: DeepLinkingLaunchParam,
    body: {
      required: true,
      description: "The items to link, as JSON or as a form.",
      content: {
        "application/json": { schema: ResponseBody },
        "application/x-www-form-urlencoded": { schema: RESPONSE_FORM_SCHEMA },
      },
    },
  },
  responses: {
    200: {
      description:
        "`application/json`: the platform's return URL and the signed JWT, to post there as the form field `JWT`. `text/html`: a page whose form posts it (Content-Security-Policy: its nonce's script only, `form-action` the return URL's origin, `frame-ancestors` the platform's origins).",
      content: {
        "application/json": { schema: ResponseAnswerSchema },
        "text/html": { schema: { type: "string" as const } },
      },
    },
    409: {
      ...errorResponses[409],
      description: "`lti_deep_linking_responded`: the launch's response was built already.",
    },
    415: {
      ...errorResponses[415],
      description: "The body is neither JSON nor `application/x-www-form-urlencoded`.",
    },
    422: {
      ...errorResponses[422],
      description:
        "`lti_deep_linking_not_accepted` (what the platform's request forbids) or `validation_failed` (an item without an id, an unknown or unpublished course or lesson); the response is not used up.",
    },
  },
});

const FORM_FIELDS = new Set(["course_id", "lesson_id", "score_maximum"]);

/** A form body read into the JSON body's shape (items in the order of their fields), for the same validation. */
function itemsOfForm(text: string): unknown {
  const errors: FieldError[] = [];
  const items: Record<string, unknown>[] = [];
  let scoreMaximum: number | undefined;
  for (const [key, value] of new URLSearchParams(text)) {
    if (!FORM_FIELDS.has(key)) errors.push({ path: key, message: "is not a field of this form" });
    else if (key === "score_maximum") {
      const number = value.trim() === "" ? Number.NaN : Number(value);
      if (!Number.isFinite(number)) errors.push({ path: key, message: "must be a number" });
      else scoreMaximum = number;
    } else items.push({ [key]: value });
  }
  if (errors.length > 0) throw validationError(errors);
  return {
    items: items.map((item) =>
      scoreMaximum === undefined ? item : { ...item, line_item: { score_maximum: scoreMaximum } },
    ),
  };
}

/** The body, JSON or a form, validated by one schema (the route reads it itself: two media types). */
async function requestedItems(c: Context<AppEnv>) {
  const type = c.req.header("Content-Type") ?? "";
  let raw: unknown;
  if (/^application\/x-www-form-urlencoded/i.test(type))
    raw = itemsOfForm(new TextDecoder().decode(await c.req.arrayBuffer()));
  else if (/^application\/json/i.test(type))
    raw = await c.req.json().catch(() => {
      throw new ApiError("malformed_json", "The request body is not valid JSON.");
    });
  else
    throw new ApiError(
      "unsupported_media_type",
      "Send the items as `application/json`, or the form as `application/x-www-form-urlencoded`.",
    );
  const parsed = ResponseBody.safeParse(raw);
  if (!parsed.success) throw validationError(fieldErrorsFromZod(parsed.error.issues));
  return parsed.data.items;
}

/** A browser (`text/html` asked for, JSON not) gets the page; everybody else JSON. */
function wantsPage(c: Context): boolean {
  const accept = c.req.header("Accept") ?? "";
  return /text\/html/i.test(accept) && !/application\/json/i.test(accept);
}

/**
 * Documented like every operation, but served by a plain handler behind the operation's middleware
 * (authentication, ability, no query): the body comes in two media types, each read and validated
 * here by the one schema, which the OpenAPI validators (one per media type, both run for a required
 * body) cannot do.
 */
export function registerLtiDeepLinkingResponse(app: OpenAPIHono<AppEnv>) {
  app.openAPIRegistry.registerPath(ltiDeepLinkingResponseRoute);
  // tokenRoute's middleware (authenticate, requireAbility, refuseQueryParameters), as app.openapi runs it.
  const { middleware: own } = ltiDeepLinkingResponseRoute as RouteConfig;
  const middleware = [own ?? []].flat() as MiddlewareHandler<AppEnv>[];
  app.post(`${LTI_DEEP_LINKING}/:launch/response`, every(...middleware), async (c) => {
    const param = DeepLinkingLaunchParam.safeParse({ launch: c.req.param("launch") });
    if (!param.success) throw validationError(fieldErrorsFromZod(param.error.issues));
    const items = await requestedItems(c);
    const answer = await respond(principalContext(c), {
      launchId: param.data.launch,
      items,
      origin: new URL(c.req.url).origin,
    });
    if (wantsPage(c))
      return autoSubmitPage({
        returnUrl: answer.return_url,
        jwt: answer.jwt,
        frameOrigins: platformOrigins(answer.return_url, answer.consumer.issuer),
      });
    c.header("Cache-Control", "no-store");
    return c.json({ return_url: answer.return_url, jwt: answer.jwt }, 200);
  });
}
