// BENCH_ONLY=lti: the LTI 1.3 launch callback end to end under the Miniflare API (workerd, local D1
// and Durable Objects), against the sign-in route of the same worker.
//
// A platform runs on loopback in this process (jose: its RSA key and JWKS). Before measuring, every
// launch is prepared the way a browser would start it: GET /api/lti/login for a single-use state and
// nonce, then an id_token signed by the platform. The measured part is the callback only — a form
// post with Accept: application/json, checked in full (state, JWKS from the isolate's cache after the
// first launch, RS256 signature, claims), the returning learner found by (registration, sub), the
// launch recorded, a session token issued — at concurrency 1 and BENCH_LTI_CONCURRENCY. The sign-in
// route (a PBKDF2 verification and a session token) is measured the same way, with the same client.
// Every request carries its own CF-Connecting-IP, so no per-IP limit is reached.
//
//   BENCH_LTI_LAUNCHES=300   launches per run;  BENCH_LTI_CONCURRENCY=8  the concurrent level
import { createServer } from "node:http";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import {
  freshIp,
  measureRequests as measure,
  passwordSignIn,
  requestJson,
  startMigratedLingua,
} from "./lib.mjs";
import { seedBenchTenant } from "./seed.mjs";

const LAUNCHES = Number(process.env.BENCH_LTI_LAUNCHES || 300);
const CONCURRENCY = Number(process.env.BENCH_LTI_CONCURRENCY || 8);
const RETURNING_LEARNERS = 20;
const LTI = "https://purl.imsglobal.org/spec/lti/claim/";

/** The platform: its JWKS on loopback (counting fetches) and a signer for id_tokens. */
async function startPlatform() {
  const { publicKey, privateKey } = await generateKeyPair("RS256");
  const kid = "bench-platform-key";
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" };
  const state = { jwksFetches: 0 };
  const server = createServer((req, res) => {
    if (req.url === "/jwks") state.jwksFetches += 1;
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${server.address().port}`;
  return {
    base,
    state,
    sign: (claims) =>
      new SignJWT(claims).setProtectedHeader({ alg: "RS256", typ: "JWT", kid }).sign(privateKey),
    close: () => new Promise((r) => server.close(r)),
  };
}

export async function runLti({ config, scriptPath, log = (m) => console.error(m) }) {
  const platform = await startPlatform();
  const { worker, base, d1 } = await startMigratedLingua({ config, scriptPath });
  const failures = [];
  const result = {
    settings: { launches: LAUNCHES, concurrency: CONCURRENCY, returningLearners: RETURNING_LEARNERS },
  };
  try {
    const { token } = await seedBenchTenant({ d1, baseUrl: base, extraTokens: 0 });
    const signIns = await passwordSignIn({
      d1,
      baseUrl: base,
      institutionId: "ins_bench",
      email: "signin@bench.lingua.test",
      password: "bench-lti-sign-in",
    });
    const clientId = "bench-client";
    const deploymentId = "bench-deployment";
    await requestJson(new URL("/api/integrations/lti-consumers", base), {
      method: "POST",
      headers: { Authorization: `Bearer ${token}` },
      body: {
        name: "Bench LMS",
        issuer: platform.base,
        client_id: clientId,
        deployment_ids: [deploymentId],
        auth_login_url: `${platform.base}/authorize`,
        auth_token_url: `${platform.base}/token`,
        jwks_url: `${platform.base}/jwks`,
      },
      expect: 201,
    });
    const callbackUrl = new URL("/api/lti/callback", base).toString();

    /** Logins done and id_tokens signed ahead: the callback posts, ready to send. */
    const prepare = async (count, offset) => {
      const posts = [];
      for (let i = 0; i < count; i++) {
        const query = new URLSearchParams({
          iss: platform.base,
          login_hint: "h",
          target_link_uri: callbackUrl,
          client_id: clientId,
        });
        const login = await fetch(new URL(`/api/lti/login?${query}`, base), {
          redirect: "manual",
          headers: { "CF-Connecting-IP": freshIp() },
        });
        const location = new URL(login.headers.get("Location"));
        // The state cookie goes back with the callback, as from the browser that made the login.
        const cookie = (login.headers.get("Set-Cookie") ?? "").split(";")[0];
        const now = Math.floor(Date.now() / 1000);
        const idToken = await platform.sign({
          iss: platform.base,
          aud: clientId,
          sub: `learner-${(offset + i) % RETURNING_LEARNERS}`,
          iat: now,
          exp: now + 600,
          nonce: location.searchParams.get("nonce"),
          name: `Learner ${(offset + i) % RETURNING_LEARNERS}`,
          [`${LTI}deployment_id`]: deploymentId,
          [`${LTI}version`]: "1.3.0",
          [`${LTI}message_type`]: "LtiResourceLinkRequest",
          [`${LTI}roles`]: ["http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"],
          [`${LTI}resource_link`]: { id: "rl-1" },
          [`${LTI}target_link_uri`]: callbackUrl,
        });
        const body = new URLSearchParams({
          id_token: idToken,
          state: location.searchParams.get("state"),
        }).toString();
        posts.push(() =>
          fetch(callbackUrl, {
            method: "POST",
            headers: {
              "Content-Type": "application/x-www-form-urlencoded",
              Accept: "application/json",
              "CF-Connecting-IP": freshIp(),
              Cookie: cookie,
            },
            body,
          }),
        );
      }
      return posts;
    };
    // Warm-up: the first launches create the returning learners and fill the JWKS cache.
    log("bench: lti — warming up (first launches create the learners and cache the platform's keys)…");
    await measure(await prepare(RETURNING_LEARNERS * 2, 0), 1);
    await measure(signIns(20), 1);

    result.runs = [];
    for (const concurrency of [1, CONCURRENCY]) {
      log(
        `bench: lti — ${LAUNCHES} launch callbacks and ${LAUNCHES} sign-ins at concurrency ${concurrency}…`,
      );
      const launches = await measure(await prepare(LAUNCHES, 0), concurrency);
      const signIn = await measure(signIns(LAUNCHES), concurrency);
      for (const [what, run] of [
        ["callback", launches],
        ["sign-in", signIn],
      ])
        if (run.statuses[200] !== run.requests)
          failures.push(
            `lti ${what} at concurrency ${concurrency}: statuses ${JSON.stringify(run.statuses)}`,
          );
      result.runs.push({ concurrency, callback: launches, signIn, ratioRps: launches.rps / signIn.rps });
    }
    result.jwksFetches = platform.state.jwksFetches;
    if (result.jwksFetches !== 1)
      failures.push(`the platform's JWKS was fetched ${result.jwksFetches} times, not once`);
    const users = await d1.prepare("SELECT count(*) AS n FROM lti_user_links").first("n");
    if (users !== RETURNING_LEARNERS) failures.push(`${users} LTI users, expected ${RETURNING_LEARNERS}`);
  } finally {
    await worker.dispose();
    await platform.close();
  }
  result.failures = failures;
  return result;
}

export function ltiReport(r) {
  const f = (n, d = 0) =>
    Number(n).toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });
  return [
    "",
    "LTI launch callback (BENCH_ONLY=lti)",
    `  ${r.settings.launches} launches per run, ${r.settings.returningLearners} returning learners, the platform's JWKS fetched ${r.jwksFetches} time(s)`,
    ...r.runs.map(
      (run) =>
        `  concurrency ${run.concurrency}: callback ${f(run.callback.rps)} req/s (p50 ${f(run.callback.p50Ms, 1)} ms, p99 ${f(run.callback.p99Ms, 1)} ms) vs sign-in ${f(run.signIn.rps)} req/s (p50 ${f(run.signIn.p50Ms, 1)} ms, p99 ${f(run.signIn.p99Ms, 1)} ms) = ${f(run.ratioRps, 2)}× sign-in's req/s`,
    ),
    ...(r.failures.length ? [`  FAILED: ${r.failures.join("; ")}`] : []),
  ].join("\n");
}
