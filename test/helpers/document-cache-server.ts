// A one-slot store on loopback for the OpenAPI document the worker serves, run by vitest in Node
// (globalSetup) for the whole test run. Building the document loads every route group and costs
// about two seconds per test file (each file has its own isolate); the first file to build it
// stores it here and the others read it (test/helpers/api.ts `servedDocument`), so the run builds
// it about once per worker instead of once per file. The text is what the worker served, unchanged.
import { createServer } from "node:http";
import type { TestProject } from "vitest/node";
import { listenOnLoopback } from "./loopback";

const MAX_BYTES = 16 * 1024 * 1024;

export default async function setup(project: TestProject) {
  let stored: string | null = null;
  const server = createServer((req, res) => {
    if (req.method === "GET") {
      if (stored === null) res.writeHead(404).end();
      else res.writeHead(200, { "Content-Type": "application/json" }).end(stored);
      return;
    }
    if (req.method !== "PUT") {
      res.writeHead(405).end();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BYTES) chunks.push(chunk);
    });
    req.on("end", () => {
      if (size > MAX_BYTES) {
        res.writeHead(413).end();
        return;
      }
      // Every file builds the same document from the same code: the first one stored stays.
      stored ??= Buffer.concat(chunks).toString("utf8");
      res.writeHead(204).end();
    });
  });
  const cache = await listenOnLoopback(server);
  project.provide("documentCacheUrl", cache.url);
  return () => cache.close();
}

declare module "vitest" {
  export interface ProvidedContext {
    /** The loopback store of the served OpenAPI document (document-cache-server.ts). */
    documentCacheUrl: string;
  }
}
