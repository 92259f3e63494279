// A DNS-over-HTTPS resolver stub on loopback (JSON form, as Cloudflare's and Google's resolvers answer
// `GET /dns-query?name=…&type=A|AAAA|TXT`), run by vitest in Node for the whole test run. Tests script
// the records of the names they use through /control and read how often each was asked for. Names it
// does not know are NXDOMAIN: nothing the tests resolve ever reaches a real resolver.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { listenOnLoopback } from "./loopback";

export interface ScriptedName {
  A?: string[];
  AAAA?: string[];
  /**
   * Each TXT record's text, answered as Cloudflare's resolver does: quoted, split into quoted
   * strings of at most 255 characters (`"\"v=spf1 …\""`).
   */
  TXT?: string[];
  /** Seconds, for every record of the name (default 300). */
  ttl?: number;
  /**
   * A DNS status other than 0 (2 SERVFAIL, 3 NXDOMAIN); or a resolver that fails: "http-500" answers
   * HTTP 500, "not-json" a 200 whose body is not JSON, "bad-shape" a 200 with JSON of another shape.
   */
  status?: number | "http-500" | "not-json" | "bad-shape";
}

const TYPES = { A: 1, AAAA: 28, TXT: 16 } as const;

/** A TXT record's text in the JSON form's `data`: quoted character-strings of up to 255 characters. */
function txtData(text: string): string {
  const parts = text.match(/[\s\S]{1,255}/g) ?? [""];
  return parts.map((part) => `"${part.replace(/["\\]/g, "\\$&")}"`).join(" ");
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function answer(res: ServerResponse, url: URL, names: Map<string, ScriptedName>): void {
  const name = (url.searchParams.get("name") ?? "").toLowerCase();
  const type = url.searchParams.get("type") as keyof typeof TYPES | null;
  const scripted = names.get(name);
  if (scripted?.status === "http-500") {
    res.writeHead(500).end("resolver down");
    return;
  }
  if (scripted?.status === "not-json" || scripted?.status === "bad-shape") {
    const body =
      scripted.status === "not-json" ? '{"Status": 0, "Answer": [' : '{"Status":"NOERROR","Answer":{}}';
    res.writeHead(200, { "content-type": "application/dns-json" }).end(body);
    return;
  }
  const status = scripted && typeof scripted.status === "number" ? scripted.status : scripted ? 0 : 3;
  const data = scripted && type && type in TYPES ? (scripted[type] ?? []) : [];
  const body = {
    Status: status,
    Question: [{ name, type: type ? TYPES[type] : 0 }],
    Answer:
      status === 0 && type
        ? data.map((value) => ({
            name,
            type: TYPES[type],
            TTL: scripted?.ttl ?? 300,
            data: type === "TXT" ? txtData(value) : value,
          }))
        : undefined,
  };
  res.writeHead(200, { "content-type": "application/dns-json" }).end(JSON.stringify(body));
}

export function startDohStub(): Promise<{ url: string; close: () => Promise<void> }> {
  const names = new Map<string, ScriptedName>();
  const queries = new Map<string, number>();
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://doh");
    if (url.pathname === "/control/names" && req.method === "PUT") {
      const scripted = JSON.parse(await readBody(req)) as Record<string, ScriptedName>;
      for (const [name, records] of Object.entries(scripted)) names.set(name.toLowerCase(), records);
      res.writeHead(204).end();
    } else if (url.pathname === "/control/queries") {
      const name = (url.searchParams.get("name") ?? "").toLowerCase();
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(queries.get(name) ?? 0));
    } else if (url.pathname === "/dns-query") {
      const name = (url.searchParams.get("name") ?? "").toLowerCase();
      queries.set(name, (queries.get(name) ?? 0) + 1);
      answer(res, url, names);
    } else {
      res.writeHead(404).end();
    }
  });
  return listenOnLoopback(server);
}
