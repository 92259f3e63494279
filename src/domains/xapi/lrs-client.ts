import type { xapiEndpoints } from "../../db/schema";
import { xapiSecretBinding } from "../../platform/crypto/sealed-values";
import { unseal } from "../../platform/crypto/sealing";
import { type OutboundResult, outboundFetch } from "../../platform/outbound";
import type { ServiceContext } from "../../platform/service/context";

export type EndpointRow = typeof xapiEndpoints.$inferSelect;

export interface LrsRequest {
  method: "GET" | "POST";
  /** Below the endpoint's base URL: `about`, `statements`. */
  path: "about" | "statements";
  query?: Record<string, string>;
  /** JSON text. */
  body?: string;
  /** Bytes of the answer to keep (default 1 KiB). */
  bodyLimit?: number;
}

/**
 * One request to an endpoint's LRS through the outbound gate, with the endpoint's
 * `X-Experience-API-Version` and credentials (read at the time of the request, so a change applies
 * to the very next one).
 *
 * PLACEHOLDER until the LRS client lands: Basic only.
 */
export async function lrsRequest(
  ctx: ServiceContext,
  endpoint: EndpointRow,
  request: LrsRequest,
): Promise<OutboundResult> {
  const secret = await unseal(
    endpoint.secretSealed,
    ctx.config.encryptionKey,
    xapiSecretBinding(endpoint.id),
  );
  const url = new URL(request.path, endpoint.endpoint);
  for (const [name, value] of Object.entries(request.query ?? {})) url.searchParams.set(name, value);
  const headers: Record<string, string> = {
    "X-Experience-API-Version": endpoint.version,
    Authorization: `Basic ${btoa(`${endpoint.username ?? ""}:${secret}`)}`,
    Accept: "application/json",
  };
  if (request.body !== undefined) headers["Content-Type"] = "application/json";
  return outboundFetch(
    ctx.env,
    url.toString(),
    { method: request.method, headers, body: request.body },
    {
      timeoutMs: ctx.config.webhooks.timeoutMs,
      bodyLimit: request.bodyLimit,
      log: { caller: "xapi", endpoint_id: endpoint.id },
    },
  );
}
