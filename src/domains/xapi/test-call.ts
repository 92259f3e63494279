import type { ServiceContext } from "../../platform/service/context";
import { type EndpointRow, type LrsResult, lrsRequest } from "./lrs-client";

/** The About resource's answer kept (its `extensions` can be long). */
const ABOUT_BODY_LIMIT = 16 * 1024;

function probe(result: LrsResult) {
  return { status: result.status, duration_ms: result.durationMs, error: result.error };
}

function aboutVersions(result: LrsResult): string[] | null {
  if (!result.ok) return null;
  try {
    const version = (JSON.parse(result.bodyPrefix ?? "") as { version?: unknown }).version;
    return Array.isArray(version) && version.every((v) => typeof v === "string") ? version : null;
  } catch {
    return null;
  }
}

function credentialsVerdict(result: LrsResult): boolean | null {
  if (result.stage === "token") {
    const status = result.tokenStatus ?? null;
    return status === 400 || status === 401 || status === 403 ? false : null;
  }
  if (result.ok) return true;
  return result.status === 401 || result.status === 403 ? false : null;
}

/**
 * The test call: `GET about` (without credentials) and an authenticated `GET statements?limit=1`,
 * both through the LRS client, answered as what the LRS said. Changes nothing but the token cache.
 */
export async function testEndpoint(ctx: ServiceContext, endpoint: EndpointRow) {
  // One after the other, in this order: an LRS sees the same sequence every time.
  const about = await lrsRequest(ctx, endpoint, {
    method: "GET",
    path: "about",
    credentials: false,
    bodyLimit: ABOUT_BODY_LIMIT,
  });
  const statements = await lrsRequest(ctx, endpoint, {
    method: "GET",
    path: "statements",
    query: { limit: "1" },
  });
  const versions = aboutVersions(about);
  return {
    reachable: about.status !== null,
    versions,
    version_supported: versions ? versions.includes(endpoint.version) : null,
    credentials_accepted: credentialsVerdict(statements),
    about: probe(about),
    statements: probe(statements),
  };
}
