import { z } from "@hono/zod-openapi";
import { XAPI_ACTIVITIES, XAPI_ACTOR_FORMATS, XAPI_STATEMENT_STATUSES, XAPI_VERSIONS } from "../../db/schema";
import { pageQueryShape, pageSchema } from "../../platform/http/pagination";
import { MAX_URL_LENGTH } from "../../platform/outbound";
import { displayText } from "../../platform/text";

/** Endpoints an institution may register (each one receives every statement again). */
export const MAX_XAPI_ENDPOINTS_PER_INSTITUTION = 10;

const URL_RULES =
  "Absolute `https` URL without credentials or fragment; private, loopback, link-local and other internal addresses are refused, as are host names resolving to them. Checked when saved and again before every request. Only local development (`ALLOW_LOOPBACK_TARGETS`) admits `http` and loopback addresses.";

const EndpointUrl = z
  .string()
  .max(MAX_URL_LENGTH)
  .openapi({
    example: "https://lrs.example.com/xapi/",
    description: `The LRS's xAPI base URL: \`about\` and \`statements\` are requested below it. Stored with a trailing \`/\` added when missing. ${URL_RULES}`,
  });

const TokenUrl = z
  .string()
  .max(MAX_URL_LENGTH)
  .openapi({
    example: "https://auth.example.com/oauth/token",
    description: `Where the OAuth 2 client-credentials grant is made. ${URL_RULES}`,
  });

/** Printable ASCII and beyond, no control characters: what goes into an HTTP header or form. */
const credentialText = (max: number) =>
  z
    .string()
    .min(1, "must not be empty")
    .max(max, `must be at most ${max} characters`)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
    .refine((value) => !/[\u0000-\u001f\u007f]/.test(value), "must not contain control characters");

const Username = credentialText(255)
  .refine((value) => !value.includes(":"), "must not contain `:` (HTTP Basic cannot carry it)")
  .openapi({ example: "lingua-forwarder" });

const Password = credentialText(1024).openapi({
  description: "Write-only: stored encrypted, never returned.",
  example: "s3cret-from-the-lrs",
});

const ClientSecret = credentialText(1024).openapi({
  description: "Write-only: stored encrypted, never returned.",
  example: "client-secret-from-the-lrs",
});

const ClientId = credentialText(255).openapi({ example: "lingua" });

const Scope = z
  .string()
  .max(500, "must be at most 500 characters")
  .regex(
    /^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/,
    "must be space-separated scope tokens (RFC 6749)",
  )
  .nullable()
  .openapi({
    example: "statements/write statements/read",
    description: "The `scope` asked for in the token request; null or left out: none is sent.",
  });

function authBody<const P extends boolean>(secretRequired: P) {
  const secret = <T extends z.ZodType>(schema: T) => (secretRequired ? schema : schema.optional());
  const Basic = z
    .strictObject({ type: z.literal("basic"), username: Username, password: secret(Password) })
    .openapi({ title: "Basic" });
  const OAuth2 = z
    .strictObject({
      type: z.literal("oauth2"),
      token_url: TokenUrl,
      client_id: ClientId,
      client_secret: secret(ClientSecret),
      scope: Scope.optional(),
    })
    .openapi({ title: "OAuth 2 client credentials" });
  return z.discriminatedUnion("type", [Basic, OAuth2]);
}

const Activities = z
  .array(z.enum(XAPI_ACTIVITIES))
  .min(1, "must list at least one activity")
  .max(XAPI_ACTIVITIES.length)
  .refine((list) => new Set(list).size === list.length, "must not list an activity twice")
  .openapi({
    description:
      "Which learning activity to forward, one verb each: `answered` (every attempt), `completed` (a lesson or course completed), `progressed` (lesson progress), `mastered` (a CEFR level reached), `earned` (an achievement). Default: all of them.",
    example: ["answered", "completed"],
  });

const writableShape = {
  name: displayText({ max: 200 }, { example: "Our Learning Locker" }),
  endpoint: EndpointUrl,
  version: z.enum(XAPI_VERSIONS).default("1.0.3").openapi({
    description: "The xAPI version spoken (`X-Experience-API-Version`). Default `1.0.3`.",
  }),
  activities: Activities.default([...XAPI_ACTIVITIES]),
  actor_format: z.enum(XAPI_ACTOR_FORMATS).default("account").openapi({
    description:
      "How a member is identified in `actor`: `account` (default: `{ homePage: <Lingua's base URL>, name: <the opaque user id> }`) or `mbox` (`mailto:` the member's e-mail address; choose it only when your LRS must join statements to other systems by e-mail).",
  }),
  enabled: z.boolean().default(true).openapi({
    description: "False: nothing is forwarded to it until it is true again.",
  }),
};

export const CreateXapiEndpointBody = z
  .strictObject({
    ...writableShape,
    auth: authBody(true).openapi({
      description:
        "The credentials Lingua sends: HTTP Basic (`username`, `password`) or an OAuth 2 bearer token of the client-credentials grant (`token_url`, `client_id`, `client_secret`, optional `scope`).",
    }),
  })
  .openapi("CreateXapiEndpointRequest");

export const UpdateXapiEndpointBody = z
  .strictObject({
    ...writableShape,
    auth: authBody(false).openapi({
      description:
        "The credentials, replaced as a whole. The secret (`password`, `client_secret`) may be left out to keep the stored one only while `type` and the identity (`username`; `token_url` and `client_id`) stay as they are; any other change needs it (422 otherwise).",
    }),
  })
  .openapi("UpdateXapiEndpointRequest");

export type CreateXapiEndpointInput = z.infer<typeof CreateXapiEndpointBody>;
export type UpdateXapiEndpointInput = z.infer<typeof UpdateXapiEndpointBody>;

const AuthSchema = z
  .discriminatedUnion("type", [
    z
      .object({ type: z.literal("basic"), username: z.string(), secret_set: z.literal(true) })
      .openapi({ title: "Basic" }),
    z
      .object({
        type: z.literal("oauth2"),
        token_url: z.string(),
        client_id: z.string(),
        scope: z.string().nullable(),
        secret_set: z.literal(true),
      })
      .openapi({ title: "OAuth 2 client credentials" }),
  ])
  .openapi("XapiEndpointAuth", {
    description:
      "The credentials without their secret, which is never returned (`secret_set` says one is stored).",
  });

export const XapiHealthSchema = z
  .object({
    sent_24h: z.number().int().openapi({ description: "Statements the LRS accepted in the last 24 hours." }),
    failed_24h: z
      .number()
      .int()
      .openapi({ description: "Statements given up in the last 24 hours (see the forwarding log)." }),
    pending: z.number().int().openapi({ description: "Statements waiting to be sent, however old." }),
    last_success_at: z.string().nullable().openapi({ description: "The LRS's last accepting answer." }),
    last_error_at: z.string().nullable(),
    last_error: z.string().nullable().openapi({ example: "HTTP 503" }),
    failing_since: z.string().nullable().openapi({
      description:
        "The first failed request since the last success; null while healthy. After 24 hours without a success the `xapi_endpoint.failing` event is emitted.",
    }),
  })
  .openapi("XapiEndpointHealth");

export const XapiEndpointSchema = z
  .object({
    id: z.string().openapi({ example: "xep_01JD3Q8W2X4Y5Z6A7B8C9D0E1H" }),
    name: z.string(),
    endpoint: z.string().openapi({ example: "https://lrs.example.com/xapi/" }),
    version: z.enum(XAPI_VERSIONS),
    auth: AuthSchema,
    activities: z.array(z.enum(XAPI_ACTIVITIES)),
    actor_format: z.enum(XAPI_ACTOR_FORMATS),
    enabled: z.boolean(),
    created_at: z.string(),
    updated_at: z.string(),
    health: XapiHealthSchema,
  })
  .openapi("XapiEndpoint");

export const XapiEndpointPageSchema = pageSchema(XapiEndpointSchema, "XapiEndpointPage");

export const XapiEndpointIdParam = z.object({
  id: z
    .string()
    .min(1)
    .openapi({ param: { name: "id", in: "path" }, example: "xep_01JD3Q8W2X4Y5Z6A7B8C9D0E1H" }),
});

const ProbeSchema = z.object({
  status: z.number().int().nullable().openapi({ description: "The HTTP status; null when no answer came." }),
  duration_ms: z.number().int(),
  error: z.string().nullable().openapi({
    description:
      "The failure in words, null on a 2xx. A failed OAuth 2 token request starts `Token request:`.",
    example: "HTTP 401",
  }),
});

export const XapiTestResultSchema = z
  .object({
    reachable: z.boolean().openapi({ description: "The LRS answered `GET about` with any HTTP status." }),
    versions: z
      .array(z.string())
      .nullable()
      .openapi({
        description: "The `version` list of the About resource; null when it gave none.",
        example: ["1.0.3", "2.0.0"],
      }),
    version_supported: z.boolean().nullable().openapi({
      description: "Whether `versions` holds the endpoint's `version`; null without `versions`.",
    }),
    credentials_accepted: z.boolean().nullable().openapi({
      description:
        "true: the statements query answered 2xx. false: the LRS (401, 403) or the OAuth 2 token endpoint (400, 401, 403) refused the credentials. null: no verdict (no answer, or another status).",
    }),
    about: ProbeSchema.openapi({ description: "`GET {endpoint}about`, sent without credentials." }),
    statements: ProbeSchema.openapi({
      description:
        "`GET {endpoint}statements?limit=1`, with the credentials (after the token request, for OAuth 2).",
    }),
  })
  .openapi("XapiEndpointTestResult");

export const XapiStatementLogSchema = z
  .object({
    id: z.string().openapi({
      description: "The statement's UUID, as sent to the LRS.",
      example: "4f1c2a8e-3b9d-5e6f-8a7b-1c2d3e4f5a6b",
    }),
    verb: z
      .enum(XAPI_ACTIVITIES)
      .openapi({ description: "The activity forwarded (docs/xapi.md gives each verb's IRI)." }),
    activity: z.string().openapi({
      description: "The statement's object: the activity IRI.",
      example: "https://api.lingua.example/xapi/activities/lessons/les_01JD3Q8W2X4Y5Z6A7B8C9D0E1H",
    }),
    user_id: z.string().openapi({ description: "The member the statement is about." }),
    occurred_at: z.string().openapi({ description: "The statement's `timestamp`: when it happened." }),
    status: z.enum(XAPI_STATEMENT_STATUSES).openapi({
      description:
        "`pending` (waiting or being retried), `sent` (the LRS accepted it, or already had it), `failed` (given up).",
    }),
    attempts: z.number().int().openapi({ description: "Requests that carried it." }),
    last_error: z.string().nullable(),
    sent_at: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi("XapiStatementLogEntry");

export const XapiStatementLogPageSchema = pageSchema(XapiStatementLogSchema, "XapiStatementLogPage");

export const ListStatementsQuery = z.object({
  ...pageQueryShape,
  status: z
    .enum(XAPI_STATEMENT_STATUSES)
    .optional()
    .openapi({ description: "Only statements in this status." }),
  verb: z.enum(XAPI_ACTIVITIES).optional().openapi({ description: "Only statements of this verb." }),
});
