import { inject } from "vitest";
import type { LrsOptions, LrsRequest, LrsState, ScriptedFailure, StoredStatement } from "./lrs-server";

export type { LrsOptions, LrsRequest, LrsState, ScriptedFailure, StoredStatement };

/** The Basic credentials an instance accepts unless told otherwise. */
export const LRS_BASIC = { username: "lrs-user", password: "lrs-pass" };

/**
 * A fresh instance of the strict loopback LRS (test/helpers/lrs-server.ts, whose header says what it
 * checks): its xAPI base URL to register as an endpoint, its OAuth 2 token URL, scripted failures,
 * and what it received and stored. Each call makes an instance of its own, so tests running in
 * parallel never see each other's statements.
 *
 *     const lrs = await createLrs({ oauth2: { client_id: "c", client_secret: "s", expires_in: 120 } });
 *     // register lrs.endpoint (and lrs.tokenUrl) through the API, record activity, then:
 *     const stored = await lrs.waitForStatements(3);
 */
export async function createLrs(
  options: LrsOptions = {},
  name: string = crypto.randomUUID(),
  /** The server's origin: the globalSetup's, or in Node the `url` of a `startLrs()` of your own. */
  server: string = inject("lrsUrl"),
) {
  const base = `${server}/lrs/${name}`;
  const control = `${server}/control/${name}`;
  const lrs = {
    name,
    /** The xAPI base URL, with its trailing slash, as an integrator would paste it. */
    endpoint: `${base}/xapi/`,
    /** The OAuth 2 token endpoint (client-credentials grant). */
    tokenUrl: `${base}/oauth/token`,
    /** Reconfigures the instance; by default it also forgets what it received (`reset: false` keeps it). */
    async configure(changes: LrsOptions): Promise<LrsState> {
      const res = await fetch(control, { method: "PUT", body: JSON.stringify(changes) });
      if (!res.ok) throw new Error(`LRS control answered ${res.status}: ${await res.text()}`);
      return (await res.json()) as LrsState;
    },
    /** Replaces the script of failures for the next matching requests (keeps what was received so far). */
    async script(script: ScriptedFailure[]): Promise<void> {
      await lrs.configure({ script, reset: false });
    },
    async state(): Promise<LrsState> {
      const res = await fetch(control);
      if (!res.ok) throw new Error(`LRS control answered ${res.status}: ${await res.text()}`);
      return (await res.json()) as LrsState;
    },
    async requests(): Promise<LrsRequest[]> {
      return (await lrs.state()).requests;
    },
    /** The POST /statements requests, in order. */
    async posts(): Promise<LrsRequest[]> {
      return (await lrs.requests()).filter((r) => r.method === "POST" && r.path === "/xapi/statements");
    },
    async statements(): Promise<StoredStatement[]> {
      return (await lrs.state()).statements;
    },
    /** How many POST requests carried each statement id, whatever the answer was. */
    async posted(): Promise<Record<string, number>> {
      return (await lrs.state()).posted;
    },
    async tokensIssued(): Promise<number> {
      return (await lrs.state()).tokens_issued;
    },
    /** Polls until at least `count` statements are stored (delivery is asynchronous). */
    async waitForStatements(count: number, timeoutMs = 20_000): Promise<StoredStatement[]> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const stored = await lrs.statements();
        if (stored.length >= count) return stored;
        if (Date.now() > deadline)
          throw new Error(`LRS stored ${stored.length} of ${count} statements in ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    /** Polls until at least `count` requests matching `which` arrived. */
    async waitForRequests(
      count: number,
      which: (r: LrsRequest) => boolean = () => true,
      timeoutMs = 20_000,
    ): Promise<LrsRequest[]> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const got = (await lrs.requests()).filter(which);
        if (got.length >= count) return got;
        if (Date.now() > deadline)
          throw new Error(`LRS got ${got.length} of ${count} requests in ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
  await lrs.configure(options);
  return lrs;
}

export type Lrs = Awaited<ReturnType<typeof createLrs>>;
