// A webhook receiver on loopback, run by vitest in Node (globalSetup) for the whole test run. Tests
// inside workerd script its answers and read what it received through /control. It verifies every
// signature with node:crypto — an HMAC implementation independent of the worker's WebCrypto — over
// the raw bytes received, comparing in constant time.
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { TestProject } from "vitest/node";
import { listenOnLoopback } from "./loopback";
import { startDohStub } from "./receiver-doh-server";

export interface ScriptedAnswer {
  status?: number;
  delay_ms?: number;
  headers?: Record<string, string>;
  body?: string;
}

export interface ReceivedRequest {
  received_at: number;
  method: string;
  headers: Record<string, string>;
  body: string;
  /** Per comma-separated X-Signature-256 digest: valid for the secret at the same position. */
  x_signature_valid: boolean[];
  /** Per space-separated webhook-signature entry: valid for the secret at the same position. */
  standard_valid: boolean[];
}

interface Endpoint {
  secrets: string[];
  script: ScriptedAnswer[];
  fallback: ScriptedAnswer;
  received: ReceivedRequest[];
}

function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

function verify(endpoint: Endpoint, headers: Record<string, string>, raw: Buffer) {
  const digests = (headers["x-signature-256"] ?? "").split(",").filter(Boolean);
  const x_signature_valid = digests.map((digest, i) => {
    const secret = endpoint.secrets[i];
    if (!secret) return false;
    const expected = createHmac("sha256", Buffer.from(secret, "utf8")).update(raw).digest();
    return sameBytes(Buffer.from(digest, "hex"), expected);
  });
  const signed = Buffer.concat([
    Buffer.from(`${headers["webhook-id"]}.${headers["webhook-timestamp"]}.`),
    raw,
  ]);
  const entries = (headers["webhook-signature"] ?? "").split(" ").filter(Boolean);
  const standard_valid = entries.map((entry, i) => {
    const secret = endpoint.secrets[i];
    if (!secret || !entry.startsWith("v1,")) return false;
    const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
    const expected = createHmac("sha256", key).update(signed).digest();
    return sameBytes(Buffer.from(entry.slice(3), "base64"), expected);
  });
  return { x_signature_valid, standard_valid };
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export function startReceiver(): Promise<{ url: string; close: () => Promise<void> }> {
  const endpoints = new Map<string, Endpoint>();
  const endpoint = (name: string) => {
    const known = endpoints.get(name);
    if (known) return known;
    const fresh: Endpoint = { secrets: [], script: [], fallback: { status: 200 }, received: [] };
    endpoints.set(name, fresh);
    return fresh;
  };
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://receiver");
    const [, kind, name] = url.pathname.split("/");
    const raw = await readBody(req);
    if (kind === "control" && name) {
      const e = endpoint(name);
      if (req.method === "PUT") {
        const options = JSON.parse(raw.toString("utf8") || "{}");
        e.secrets = options.secrets ?? e.secrets;
        e.script = options.script ?? [];
        e.fallback = options.fallback ?? { status: 200 };
        if (options.reset !== false) e.received = [];
      }
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ received: e.received }));
      return;
    }
    if (kind === "hook" && name) {
      const e = endpoint(name);
      const headers = Object.fromEntries(
        Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : (v ?? "")]),
      );
      e.received.push({
        received_at: Date.now(),
        method: req.method ?? "",
        headers,
        body: raw.toString("utf8"),
        ...verify(e, headers, raw),
      });
      const answer = e.script.shift() ?? e.fallback;
      if (answer.delay_ms) await new Promise((r) => setTimeout(r, answer.delay_ms));
      if (!res.destroyed) res.writeHead(answer.status ?? 200, answer.headers ?? {}).end(answer.body ?? "ok");
      return;
    }
    res.writeHead(404).end();
  });
  return listenOnLoopback(server);
}

declare module "vitest" {
  export interface ProvidedContext {
    receiverUrl: string;
    /** The DNS-over-HTTPS stub of receiver-doh-server.ts. */
    dohUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const receiver = await startReceiver();
  const doh = await startDohStub();
  project.provide("receiverUrl", receiver.url);
  project.provide("dohUrl", doh.url);
  return async () => {
    await Promise.all([receiver.close(), doh.close()]);
  };
}
