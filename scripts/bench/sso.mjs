// BENCH_ONLY=sso: an OIDC and a SAML sign-in end to end under the Miniflare API (workerd, local D1
// and Durable Objects), against the password sign-in route of the same worker.
//
// The identity providers are the tests' own, run on loopback in this process: the OpenID Provider of
// test/sso/openid-provider.ts (panva's oidc-provider, its own RSA key, a client registered for the
// institution) and the SAML IdP of test/helpers/saml-idp.ts (its own key and certificate, Responses
// signed by xmldsigjs). Both modules are TypeScript; esbuild turns them into .bench/sso-helpers/*.mjs
// first, unchanged.
//
// A sign-in is Lingua's three requests, each phase sent for every sign-in at the measured concurrency
// and timed as a whole; what the IdP does in between is done untimed between the phases:
//   1. begin: GET /api/auth/sso?email=… with Accept: application/json (a pending request, its cookie);
//   — the IdP: OIDC, the browser's authorization at the provider and its login as the account, up to
//     the redirect to our callback; SAML, a Response to the AuthnRequest, signed by the IdP;
//   2. OIDC: GET …/oidc/{id}/callback — state, the code exchanged at the provider's token endpoint
//      (loopback, through the outbound gate), the ID token verified against its JWKS, the member found;
//      SAML: POST …/saml/{id}/acs — the XML signature verified, every check, the member found;
//   3. POST /api/auth/sso/session with the code from the 303's fragment: the session token.
// The phases run BATCH sign-ins at a time. Sign-ins per second = sign-ins ÷ the three phases' summed
// wall time over all batches. Password sign-in (a PBKDF2 verification and a session token) is
// measured the same way, with the same client. Every request carries its own CF-Connecting-IP, so no
// per-IP limit is reached. Returning members, as in lti.mjs:
// the warm-up signs each in once (just-in-time provisioning) and fills the isolate's caches.
//
//   BENCH_SSO_SIGN_INS=200   sign-ins per protocol and level;  BENCH_SSO_CONCURRENCY=4  the concurrent level
//   BENCH_SSO_BATCH=50       sign-ins per batch: each phase runs for a batch, so no code grows older than
//                            the provider's 60 s (oidc-provider's authorization code) or ours
//   BENCH_SSO_PROFILE=<file>  instead of the measured runs, after the warm-up: a CPU profile of Lingua's
//                            isolate (workerd's inspector, an unminified bundle) over BENCH_SSO_SIGN_INS
//                            sign-ins per protocol at concurrency 1 into <file>.<protocol>.cpuprofile,
//                            and the D1 round trips and statements of each phase (scripts/bench/sso-profile.mjs)
import { writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  BENCH_OUT,
  ensureDir,
  freshIp,
  measureRequests,
  passwordSignIn,
  percentile,
  ROOT,
  randomKey,
  requestJson,
  startMigratedLingua,
  withProfilingEntry,
} from "./lib.mjs";
import { BENCH_TENANT, seedBenchTenant } from "./seed.mjs";
import { d1RoundTripsEntry } from "./sso-profile.mjs";
import { startCpuProfiles, summary } from "./xapi-profile.mjs";

const SIGN_INS = Number(process.env.BENCH_SSO_SIGN_INS || 200);
const CONCURRENCY = Number(process.env.BENCH_SSO_CONCURRENCY || 4);
const RETURNING_MEMBERS = 20;
const BATCH = Number(process.env.BENCH_SSO_BATCH || 50);
const OIDC_DOMAIN = "oidc.bench.test";
const SAML_DOMAIN = "saml.bench.test";
const SAML_SSO_URL = "https://idp.saml.bench.test/sso";
const PROFILE = process.env.BENCH_SSO_PROFILE || "";
const PROFILE_PORT = 9331;

/** The tests' IdP modules as plain ESM for Node (packages stay external, resolved from the repository). */
async function loadIdpModules() {
  const { build } = await import("esbuild");
  const outdir = ensureDir(join(BENCH_OUT, "sso-helpers"));
  await build({
    entryPoints: {
      "openid-provider": join(ROOT, "test/sso/openid-provider.ts"),
      "saml-idp": join(ROOT, "test/helpers/saml-idp.ts"),
    },
    outdir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    packages: "external",
    logLevel: "warning",
  });
  // xmldsigjs finds Web Crypto as `self.crypto` in workerd and browsers; Node has it as globalThis.crypto.
  const { Application } = await import("xmldsigjs");
  Application.setEngine("Node.js Web Crypto", globalThis.crypto);
  const load = (name) => import(pathToFileURL(join(outdir, `${name}.mjs`)).href);
  return { oidc: await load("openid-provider"), saml: await load("saml-idp") };
}

/** Cookies as a browser keeps them for the provider (paths ignored), as test/sso/oidc.test.ts does. */
class Jar {
  cookies = new Map();
  take(res) {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const at = pair.indexOf("=");
      if (at > 0) this.cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
  }
  header() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
}

const stateCookieOf = (headers) => {
  const pair = (headers.get("Set-Cookie") ?? "").split(";")[0];
  if (!pair.startsWith("sso_state_")) throw new Error(`no SSO state cookie: ${headers.get("Set-Cookie")}`);
  return pair;
};

/** An institution and its admin written into D1 (as seed.mjs does), then the admin's session over HTTP. */
async function institutionWithAdmin({ d1, baseUrl, id, slug }) {
  const password = `bench-${randomKey().slice(0, 12)}`;
  const { hashPassword } = await import("../demo-data.mjs");
  await d1.batch([
    d1
      .prepare(
        "INSERT INTO institutions (id, slug, name, plan, rate_limit_per_minute) VALUES (?, ?, ?, ?, ?)",
      )
      .bind(id, slug, `Bench ${slug}`, "enterprise", BENCH_TENANT.institution.rateLimitPerMinute),
    d1
      .prepare(
        "INSERT INTO users (id, email, name, role, institution_id, password_hash) VALUES (?, ?, 'Admin', 'institution_admin', ?, ?)",
      )
      .bind(`usr_${slug}_admin`, `admin@${slug}.lingua.test`, id, hashPassword(password)),
  ]);
  const signIn = await requestJson(new URL("/api/auth/sign-in", baseUrl), {
    method: "POST",
    headers: { "CF-Connecting-IP": freshIp() },
    body: { email: `admin@${slug}.lingua.test`, password },
  });
  return signIn.body.token;
}

/** Platform staff (who verify claimed domains), written into D1, and their session token. */
async function platformStaffToken({ d1, baseUrl }) {
  const password = `bench-${randomKey().slice(0, 12)}`;
  const { hashPassword } = await import("../demo-data.mjs");
  await d1
    .prepare(
      "INSERT INTO users (id, email, name, role, institution_id, password_hash) VALUES ('usr_bench_staff', 'staff@bench.lingua.test', 'Staff', 'platform_admin', NULL, ?)",
    )
    .bind(hashPassword(password))
    .run();
  const signIn = await requestJson(new URL("/api/auth/sign-in", baseUrl), {
    method: "POST",
    headers: { "CF-Connecting-IP": freshIp() },
    body: { email: "staff@bench.lingua.test", password },
  });
  return signIn.body.token;
}

/** PUT the SSO settings (active) and verify the domain as platform staff; the settings as answered. */
async function activateSso({ baseUrl, institutionId, adminToken, staffToken, domain, settings }) {
  const put = await requestJson(new URL(`/api/institutions/${institutionId}/sso`, baseUrl), {
    method: "PUT",
    headers: { Authorization: `Bearer ${adminToken}` },
    body: { state: "active", enforced: false, domains: [domain], ...settings },
  });
  await requestJson(new URL(`/api/institutions/${institutionId}/sso/domains/${domain}/verify`, baseUrl), {
    method: "POST",
    headers: { Authorization: `Bearer ${staffToken}` },
    body: { method: "manual" },
  });
  return put.body;
}

/** Phase 1 for `emails`: begin requests, ready to send. */
const begins = (baseUrl, emails) =>
  emails.map(
    (email) => () =>
      fetch(new URL(`/api/auth/sso?email=${encodeURIComponent(email)}`, baseUrl), {
        headers: { Accept: "application/json", "CF-Connecting-IP": freshIp() },
      }),
  );

/** Phase 3: the code of each 303's fragment, exchanged for a session. */
const exchanges = (baseUrl, landings) =>
  landings.map((answer) => {
    const code = decodeURIComponent(
      new URL(answer.headers.get("Location") ?? "about:blank").hash.replace(/^#code=/, ""),
    );
    return () =>
      fetch(new URL("/api/auth/sso/session", baseUrl), {
        method: "POST",
        headers: { "Content-Type": "application/json", "CF-Connecting-IP": freshIp() },
        body: JSON.stringify({ code }),
      });
  });

/**
 * Sign-ins of `emails`, phase by phase at `concurrency`, BATCH at a time: `idp(beginAnswer, index)`
 * plays the IdP and the browser untimed and returns the request to Lingua's callback or ACS. Batches
 * keep every code fresh: the provider's authorization code lives 60 s, our session code 60 s.
 */
async function signIns({ baseUrl, emails, concurrency, idp, around = (_phase, run) => run() }) {
  const phases = { begin: [], callback: [], session: [] };
  let wrongUser = 0;
  // Why a callback or ACS refused, by the problem's `reason` (or `code`), for the failure message.
  const refusals = {};
  for (let offset = 0; offset < emails.length; offset += BATCH) {
    const batch = emails.slice(offset, offset + BATCH);
    const begin = await around("begin", () =>
      measureRequests(begins(baseUrl, batch), concurrency, { keep: true }),
    );
    const returns = [];
    for (let i = 0; i < batch.length; i++) returns.push(await idp(begin.answers[i], offset + i));
    const callback = await around("callback", () => measureRequests(returns, concurrency, { keep: true }));
    const session = await around("session", () =>
      measureRequests(exchanges(baseUrl, callback.answers), concurrency, { keep: true }),
    );
    wrongUser += session.answers.filter(
      (a, i) => a.status === 200 && JSON.parse(a.body).user?.email !== batch[i],
    ).length;
    for (const a of callback.answers)
      if (a.status !== 303) {
        let why = `${a.status}`;
        try {
          const problem = JSON.parse(a.body);
          why = `${a.status} ${problem.reason ?? problem.code}: ${problem.detail ?? ""}`;
        } catch {}
        refusals[why] = (refusals[why] ?? 0) + 1;
      }
    phases.begin.push(begin);
    phases.callback.push(callback);
    phases.session.push(session);
  }
  /** A phase over all batches: summed wall time, merged statuses and latencies. */
  const combine = (runs) => {
    const latencies = runs.flatMap((r) => r.latencies);
    const statuses = {};
    for (const r of runs)
      for (const [status, n] of Object.entries(r.statuses)) statuses[status] = (statuses[status] ?? 0) + n;
    const seconds = runs.reduce((sum, r) => sum + r.seconds, 0);
    return {
      requests: latencies.length,
      statuses,
      seconds,
      rps: latencies.length / seconds,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      meanMs: latencies.reduce((a, b) => a + b, 0) / latencies.length,
    };
  };
  const begin = combine(phases.begin);
  const callback = combine(phases.callback);
  const session = combine(phases.session);
  const seconds = begin.seconds + callback.seconds + session.seconds;
  return {
    signIns: emails.length,
    seconds,
    rps: emails.length / seconds,
    begin,
    callback,
    session,
    wrongUser,
    refusals,
  };
}

/**
 * BENCH_SSO_PROFILE: each protocol's sign-ins at concurrency 1 under workerd's CPU profiler, and the
 * D1 round trips and statements per sign-in of each phase (and of a password sign-in, the yardstick).
 */
async function profileSignIns({ baseUrl, log, protocols, password }) {
  const d1Counts = () => requestJson(new URL("/__d1-statements", baseUrl)).then((r) => r.body);
  const out = {};
  for (const [what, emails, idp] of protocols) {
    const phases = { begin: [], callback: [], session: [] };
    await d1Counts();
    const profiler = await startCpuProfiles(PROFILE_PORT, /lingua-api$/);
    const run = await signIns({
      baseUrl,
      emails,
      concurrency: 1,
      idp,
      around: async (phase, send) => {
        await d1Counts();
        const measured = await send();
        phases[phase].push(await d1Counts());
        return measured;
      },
    });
    const profiles = await profiler.stop();
    for (const [title, profile] of Object.entries(profiles)) {
      writeFileSync(`${PROFILE}.${what}.cpuprofile`, JSON.stringify(profile));
      const top = summary(profile, 35);
      log(
        `bench: sso — ${what}: CPU profile of ${title} (${PROFILE}.${what}.cpuprofile): ${top.totalMs.toFixed(0)} ms on CPU for ${emails.length} sign-ins`,
      );
      log(`  self:\n${top.self.join("\n")}\n  inclusive:\n${top.inclusive.join("\n")}`);
    }
    out[what] = { rps: run.rps, phases: {} };
    for (const [phase, counts] of Object.entries(phases)) {
      const roundTrips = counts.reduce((n, c) => n + c.roundTrips, 0) / emails.length;
      const bySql = new Map();
      for (const c of counts)
        for (const s of c.statements)
          bySql.set(s.sql, (bySql.get(s.sql) ?? 0) + s.statements / emails.length);
      out[what].phases[phase] = {
        p50Ms: run[phase].p50Ms,
        roundTrips,
        statements: Object.fromEntries(bySql),
      };
      log(
        `bench: sso — ${what} ${phase}: p50 ${run[phase].p50Ms.toFixed(1)} ms, ${roundTrips.toFixed(2)} D1 round trips per sign-in:`,
      );
      for (const [sql, n] of bySql) log(`  ${n.toFixed(2).padStart(6)}  ${sql}`);
    }
  }
  await d1Counts();
  const yardstick = await measureRequests(password(50), 1);
  const counts = await d1Counts();
  out.password = { p50Ms: yardstick.p50Ms, roundTrips: counts.roundTrips / 50 };
  log(
    `bench: sso — password sign-in: p50 ${yardstick.p50Ms.toFixed(1)} ms, ${(counts.roundTrips / 50).toFixed(2)} D1 round trips:`,
  );
  for (const s of counts.statements) log(`  ${(s.statements / 50).toFixed(2).padStart(6)}  ${s.sql}`);
  writeFileSync(`${PROFILE}.d1.json`, JSON.stringify(out, null, 1));
  return out;
}

function checkSignIns(failures, what, run) {
  const expected = { begin: 200, callback: 303, session: 200 };
  for (const [phase, status] of Object.entries(expected))
    if (run[phase].statuses[status] !== run[phase].requests)
      failures.push(`${what} ${phase}: statuses ${JSON.stringify(run[phase].statuses)}`);
  if (run.wrongUser) failures.push(`${what}: ${run.wrongUser} sessions of another member`);
  if (Object.keys(run.refusals).length) failures.push(`${what} refused: ${JSON.stringify(run.refusals)}`);
}

export async function runSso({ config, scriptPath, log = (m) => console.error(m) }) {
  log("bench: sso — building the tests' IdP modules for Node…");
  const modules = await loadIdpModules();
  const op = await modules.oidc.startOpenIdProvider();
  const samlIdp = await modules.saml.createSamlIdp("https://idp.saml.bench.test/saml");
  // Profiled: workerd's inspector open, and every request's D1 work counted by an entry module.
  const profiled = (options) =>
    withProfilingEntry(options, {
      inspectorPort: PROFILE_PORT,
      scriptPath,
      name: "bench-sso-d1-entry.mjs",
      contents: d1RoundTripsEntry(`./${basename(scriptPath)}`),
    });
  const { worker, base, d1 } = await startMigratedLingua({
    config,
    scriptPath,
    ...(PROFILE ? { wrap: profiled } : {}),
  });
  const failures = [];
  const result = {
    settings: { signIns: SIGN_INS, concurrency: CONCURRENCY, returningMembers: RETURNING_MEMBERS },
  };
  try {
    const { token: oidcAdmin } = await seedBenchTenant({ d1, baseUrl: base, extraTokens: 0 });
    const oidcInstitution = BENCH_TENANT.institution.id;
    const samlInstitution = "ins_bench_saml";
    const samlAdmin = await institutionWithAdmin({
      d1,
      baseUrl: base,
      id: samlInstitution,
      slug: "bench-saml",
    });
    const staffToken = await platformStaffToken({ d1, baseUrl: base });
    const passwordSignIns = await passwordSignIn({
      d1,
      baseUrl: base,
      institutionId: oidcInstitution,
      email: "signin@bench.lingua.test",
      password: "bench-sso-sign-in",
    });

    // OIDC: a client at the provider for our redirect URI, the settings, and the members' accounts.
    // Our URLs are announced from the request's origin: here, the local worker's.
    const redirectUri = new URL(`/api/auth/sso/oidc/${oidcInstitution}/callback`, base).href;
    const registration = await requestJson(new URL("/reg", op.url), {
      method: "POST",
      body: {
        redirect_uris: [redirectUri],
        response_types: ["code"],
        grant_types: ["authorization_code"],
        token_endpoint_auth_method: "client_secret_basic",
      },
      expect: 201,
    });
    const oidcSettings = await activateSso({
      baseUrl: base,
      institutionId: oidcInstitution,
      adminToken: oidcAdmin,
      staffToken,
      domain: OIDC_DOMAIN,
      settings: {
        type: "oidc",
        oidc: {
          issuer: op.url,
          client_id: registration.body.client_id,
          client_secret: registration.body.client_secret,
        },
      },
    });
    if (oidcSettings.oidc?.redirect_uri !== redirectUri)
      throw new Error(`redirect_uri ${oidcSettings.oidc?.redirect_uri}, registered ${redirectUri}`);
    const oidcEmails = Array.from({ length: RETURNING_MEMBERS }, (_, i) => `member${i}@${OIDC_DOMAIN}`);
    for (const [i, email] of oidcEmails.entries())
      await fetch(new URL("/control/accounts", op.url), {
        method: "PUT",
        body: JSON.stringify({
          sub: `sub-${i}`,
          claims: { email, email_verified: true, name: `Member ${i}` },
        }),
      });

    /** The browser at the provider: authorize, log in as the member, follow until our callback. */
    const oidcIdp = async (begun, i) => {
      const jar = new Jar();
      const follow = async (url) => {
        const res = await fetch(url, { redirect: "manual", headers: { Cookie: jar.header() } });
        jar.take(res);
        await res.arrayBuffer();
        return new URL(res.headers.get("Location") ?? "", op.url);
      };
      const interaction = await follow(JSON.parse(begun.body).redirect_url);
      let next = await follow(
        `${interaction.href.replace(/\/$/, "")}/login?account=sub-${i % RETURNING_MEMBERS}`,
      );
      for (let hops = 0; hops < 5 && next.origin === new URL(op.url).origin; hops++)
        next = await follow(next.href);
      const cookie = stateCookieOf(begun.headers);
      const callback = new URL(`${next.pathname}${next.search}`, base);
      return () =>
        fetch(callback, {
          redirect: "manual",
          headers: { "CF-Connecting-IP": freshIp(), Cookie: cookie },
        });
    };

    // SAML: the settings with the IdP's certificate; the IdP answers each AuthnRequest.
    const samlSettings = await activateSso({
      baseUrl: base,
      institutionId: samlInstitution,
      adminToken: samlAdmin,
      staffToken,
      domain: SAML_DOMAIN,
      settings: {
        type: "saml",
        saml: {
          idp_entity_id: samlIdp.entityId,
          sso_url: SAML_SSO_URL,
          certificates: [samlIdp.certificatePem],
          attribute_mapping: { email: "email", name: "displayName" },
        },
      },
    });
    const { acs_url: acsUrl, entity_id: entityId } = samlSettings.saml.sp;
    const samlEmails = Array.from({ length: RETURNING_MEMBERS }, (_, i) => `member${i}@${SAML_DOMAIN}`);
    const samlIdpTurn = async (begun, i) => {
      const location = JSON.parse(begun.body).redirect_url;
      const request = await modules.saml.readAuthnRequest(location);
      const email = samlEmails[i % RETURNING_MEMBERS];
      const xml = await modules.saml.signedResponse(samlIdp, {
        acsUrl,
        audience: entityId,
        inResponseTo: request.id,
        nameId: email,
        attributes: { email, displayName: `Member ${i % RETURNING_MEMBERS}` },
      });
      const form = new URLSearchParams({
        SAMLResponse: modules.saml.postBinding(xml),
        RelayState: request.relayState ?? "",
      }).toString();
      const cookie = stateCookieOf(begun.headers);
      const acs = new URL(new URL(acsUrl).pathname, base);
      return () =>
        fetch(acs, {
          method: "POST",
          redirect: "manual",
          headers: {
            "Content-Type": "application/x-www-form-urlencoded",
            "CF-Connecting-IP": freshIp(),
            Cookie: cookie,
          },
          body: form,
        });
    };

    const emailsFor = (emails, count) => Array.from({ length: count }, (_, i) => emails[i % emails.length]);

    // Warm-up: the first sign-ins provision the members and fill the isolate's caches (discovery,
    // JWKS, the XML libraries).
    log("bench: sso — warming up (the first sign-ins provision the members)…");
    for (const [what, emails, idp] of [
      ["oidc", oidcEmails, oidcIdp],
      ["saml", samlEmails, samlIdpTurn],
    ]) {
      const warm = await signIns({
        baseUrl: base,
        emails: emailsFor(emails, RETURNING_MEMBERS * 2),
        concurrency: 1,
        idp,
      });
      checkSignIns(failures, `${what} warm-up`, warm);
    }
    await measureRequests(passwordSignIns(20), 1);

    if (PROFILE) {
      result.profile = await profileSignIns({
        baseUrl: base,
        log,
        protocols: [
          ["oidc", emailsFor(oidcEmails, SIGN_INS), oidcIdp],
          ["saml", emailsFor(samlEmails, SIGN_INS), samlIdpTurn],
        ],
        password: passwordSignIns,
      });
      result.failures = failures;
      return result;
    }

    result.runs = [];
    for (const concurrency of [1, CONCURRENCY]) {
      log(`bench: sso — ${SIGN_INS} OIDC, SAML and password sign-ins at concurrency ${concurrency}…`);
      const oidc = await signIns({
        baseUrl: base,
        emails: emailsFor(oidcEmails, SIGN_INS),
        concurrency,
        idp: oidcIdp,
      });
      const saml = await signIns({
        baseUrl: base,
        emails: emailsFor(samlEmails, SIGN_INS),
        concurrency,
        idp: samlIdpTurn,
      });
      const password = await measureRequests(passwordSignIns(SIGN_INS), concurrency);
      checkSignIns(failures, `oidc at concurrency ${concurrency}`, oidc);
      checkSignIns(failures, `saml at concurrency ${concurrency}`, saml);
      if (password.statuses[200] !== password.requests)
        failures.push(`password sign-in at concurrency ${concurrency}: ${JSON.stringify(password.statuses)}`);
      result.runs.push({
        concurrency,
        oidc,
        saml,
        password,
        oidcRatio: oidc.rps / password.rps,
        samlRatio: saml.rps / password.rps,
      });
    }
    const members = await d1
      .prepare(
        "SELECT count(*) AS n FROM users WHERE email LIKE '%@oidc.bench.test' OR email LIKE '%@saml.bench.test'",
      )
      .first("n");
    if (members !== RETURNING_MEMBERS * 2)
      failures.push(`${members} SSO members, expected ${RETURNING_MEMBERS * 2}`);
  } finally {
    await worker.dispose();
    await op.close();
  }
  result.failures = failures;
  return result;
}

export function ssoReport(r) {
  const f = (n, d = 0) =>
    Number(n).toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });
  const phases = (s) =>
    ["begin", "callback", "session"]
      .map((p) => `${p} ${f(s[p].rps)} req/s, p50 ${f(s[p].p50Ms, 1)} ms`)
      .join("; ");
  return [
    "",
    "SSO sign-in (BENCH_ONLY=sso)",
    `  ${r.settings.signIns} sign-ins per protocol and level, ${r.settings.returningMembers} returning members per protocol; a sign-in = begin + callback/ACS + session exchange`,
    ...(r.runs ?? []).flatMap((run) => [
      `  concurrency ${run.concurrency}: password sign-in ${f(run.password.rps)} req/s (p50 ${f(run.password.p50Ms, 1)} ms)`,
      `    OIDC ${f(run.oidc.rps, 1)} sign-ins/s = ${f(run.oidcRatio, 2)}× password (${phases(run.oidc)})`,
      `    SAML ${f(run.saml.rps, 1)} sign-ins/s = ${f(run.samlRatio, 2)}× password (${phases(run.saml)})`,
    ]),
    ...(r.failures.length ? [`  FAILED: ${r.failures.join("; ")}`] : []),
  ].join("\n");
}
