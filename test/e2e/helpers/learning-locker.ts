/**
 * Learning Locker's LRS (the npm package `xapi-statements`, GPL-3.0, a dev dependency only: it is
 * never bundled into the worker) on a loopback port inside the Node test process, for the end-to-end
 * tests to send real statements to a real, strict LRS.
 *
 * The package's own entry point (dist/server.js) is not used: it reads its settings from process.env
 * and a .env file when first required, listens on a fixed port, connects to Mongo and Redis by
 * default and calls process.exit on SIGINT/SIGTERM. Instead this helper assembles the same parts the
 * entry point does — the repository facade, the service, the Express presenter and the translator —
 * with settings passed as arguments, so nothing is read from or written to the environment:
 *   - models in memory (`memory`), events and auth in the package's `test` fakes (no Redis, no Mongo),
 *     attachments and access logs in a temporary directory removed on close;
 *   - the service in its xAPI compliance mode (the .env.example defaults: conflict, attachment and
 *     voiding checks on; updates awaited so a GET right after a POST sees the statement);
 *   - credentials: the fake auth accepts any token, so the client lookup is replaced by one that
 *     accepts exactly one Basic username/password and answers 401 (the package's Unauthorised
 *     error) otherwise.
 * Routes are the package's own: `{url}/xAPI/about`, `{url}/xAPI/statements`, `{url}/xAPI/activities`
 * (Express matches paths case-insensitively, so `{url}/xapi/...` works too). It announces 1.0.3 only.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { listenOnLoopback } from "../../helpers/loopback";

const require = createRequire(import.meta.url);
/** Resolves as the package itself would: its own dist files and its own dependencies. */
const fromPackage = createRequire(require.resolve("xapi-statements/package.json"));

// An untyped CommonJS package (its typings need its old @types).
type Untyped = any;
const load = (path: string): Untyped => {
  const module = fromPackage(path);
  return module.default ?? module;
};

export interface LearningLocker {
  /** The server's origin. */
  url: string;
  /** The xAPI base URL (with its trailing slash), as an integrator would register it. */
  endpoint: string;
  username: string;
  password: string;
  /** The Authorization header value it accepts. */
  authorization: string;
  /** What the package logged at level error (its handled 4xx/5xx errors), for failure messages. */
  errors: string[];
  close(): Promise<void>;
}

/** The client the accepted credentials stand for (the shape of the package's own test client). */
const CLIENT = {
  _id: "5f0000000000000000000001",
  title: "Lingua tests",
  authority: { objectType: "Agent", name: "Lingua tests", mbox: "mailto:lrs-client@lingua.test" },
  isTrusted: true,
  lrs_id: "5f0000000000000000000002",
  organisation: "5f0000000000000000000003",
  scopes: ["all"],
};

export async function startLearningLocker(
  credentials: { username?: string; password?: string } = {},
): Promise<LearningLocker> {
  const username = credentials.username ?? "lingua";
  const password = credentials.password ?? randomBytes(12).toString("hex");
  const authorization = `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
  const storageDir = await mkdtemp(join(tmpdir(), "learning-locker-"));

  // The package loads the AWS SDK v2 (for its S3 storage, unused here), which prints an
  // end-of-support notice when loaded unless told not to, the SDK's documented way.
  fromPackage("aws-sdk/lib/maintenance_mode_message").suppress = true;
  const express = fromPackage("express");
  const repoFacade = load("./dist/repo/facade");
  const serviceFactory = load("./dist/service");
  const presenterFactory = load("./dist/expressPresenter");
  const translatorFactory = load("./dist/translatorFactory");
  const constants = fromPackage("./dist/utils/constants");
  const Unauthorised = load("jscommons/dist/errors/Unauthorised");
  const fakeTracker = load("jscommons/dist/tracker/fake");

  const errors: string[] = [];
  const quiet = () => {};
  const logger = {
    error: (message: string) => errors.push(String(message)),
    warn: quiet,
    info: quiet,
    verbose: quiet,
    debug: quiet,
    silly: quiet,
  };
  const tracker = fakeTracker();

  const repo = repoFacade({
    auth: { facade: "test", fake: {} },
    events: { facade: "test" },
    models: { facade: "memory", memory: { state: { fullActivities: [], statements: [] } } },
    storage: { facade: "local", local: { storageDir } },
  });
  repo.getClient = async ({ authToken }: { authToken: string }) => {
    if (authToken !== authorization) throw new Unauthorised();
    return { client: CLIENT };
  };
  await repo.migrate();

  const service = serviceFactory({
    repo,
    tracker,
    logger,
    enableConflictChecks: true,
    enableAttachmentValidation: true,
    enableVoidingChecks: true,
    enableStatementCreation: true,
    enableAttachmentCreation: true,
    enableVoiding: true,
    enableReferencing: true,
    awaitUpdates: true,
    enableActivityUpdates: true,
    enableNullRemoval: false,
  });
  const presenter = presenterFactory({
    llClientInfoEndpoint: "http://127.0.0.1:9/unused",
    customRoute: "status",
    customRouteText: "ok",
    morganDirectory: join(storageDir, "accessLogs"),
    bodyParserLimit: "5mb",
    service,
    tracker,
    translator: translatorFactory(),
    logger,
  });

  const app = express();
  app.use(constants.aboutRoute, presenter.aboutRouter);
  app.use(constants.fullActivitiesRoute, presenter.fullActivitiesRouter);
  app.use(constants.statementsRoute, presenter.statementsRouter);

  const server = await listenOnLoopback(createServer(app));
  return {
    url: server.url,
    endpoint: `${server.url}/xAPI/`,
    username,
    password,
    authorization,
    errors,
    async close() {
      await server.close();
      await rm(storageDir, { recursive: true, force: true });
    },
  };
}
