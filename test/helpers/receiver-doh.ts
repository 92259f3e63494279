import { inject } from "vitest";
import type { ScriptedName } from "./receiver-doh-server";

/**
 * The loopback DNS-over-HTTPS stub (test/helpers/receiver-doh-server.ts): its resolver URL for
 * OUTBOUND_DOH_URL, the records to answer per name, and how often a name was asked for (A and AAAA
 * count one each).
 */
export function dohStub() {
  const base = inject("dohUrl");
  return {
    /** For a per-request `env` override: the tests' own OUTBOUND_DOH_URL is "off" (vitest.config.ts). */
    resolverUrl: `${base}/dns-query`,
    async script(names: Record<string, ScriptedName>): Promise<void> {
      await fetch(`${base}/control/names`, { method: "PUT", body: JSON.stringify(names) });
    },
    async queries(name: string): Promise<number> {
      const res = await fetch(`${base}/control/queries?name=${encodeURIComponent(name)}`);
      return (await res.json()) as number;
    },
  };
}

/** A host name no other test uses, under the reserved `.test` domain. */
export function uniqueName(label = "hook"): string {
  return `${label}-${crypto.randomUUID().slice(0, 8)}.lingua.test`;
}
