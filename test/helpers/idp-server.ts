// A loopback identity provider for the SSO settings tests, run by vitest in Node (globalSetup):
// `GET /idp/<name>/.well-known/openid-configuration` answers a discovery document naming the issuer
// `<base>/idp/<name>`; a test may script any path's answer first with `PUT /control` and
// `{ path, status, content_type, body }` (e.g. a document naming another issuer, SAML metadata, a 500).
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { TestProject } from "vitest/node";
import { listenOnLoopback } from "./loopback";

interface Scripted {
  status: number;
  content_type: string;
  body: string;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export async function startIdp(): Promise<{ url: string; close: () => Promise<void> }> {
  const scripted = new Map<string, Scripted>();
  const requests = new Map<string, number>();
  let base = "";
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? "/", "http://idp").pathname;
    const raw = await readBody(req);
    if (path === "/control" && req.method === "PUT") {
      const options = JSON.parse(raw);
      scripted.set(options.path, {
        status: options.status ?? 200,
        content_type: options.content_type ?? "application/json",
        body: options.body ?? "",
      });
      res.writeHead(204).end();
      return;
    }
    if (path === "/requests") {
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify(Object.fromEntries(requests)));
      return;
    }
    requests.set(path, (requests.get(path) ?? 0) + 1);
    const answer = scripted.get(path);
    if (answer) {
      res.writeHead(answer.status, { "content-type": answer.content_type }).end(answer.body);
      return;
    }
    const match = /^\/idp\/([^/]+)\/\.well-known\/openid-configuration$/.exec(path);
    if (match) {
      const issuer = `${base}/idp/${match[1]}`;
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/jwks`,
          response_types_supported: ["code"],
          subject_types_supported: ["public"],
          id_token_signing_alg_values_supported: ["RS256"],
        }),
      );
      return;
    }
    res.writeHead(404).end();
  });
  const listening = await listenOnLoopback(server);
  base = listening.url;
  return listening;
}

declare module "vitest" {
  export interface ProvidedContext {
    idpUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const idp = await startIdp();
  project.provide("idpUrl", idp.url);
  return idp.close;
}
