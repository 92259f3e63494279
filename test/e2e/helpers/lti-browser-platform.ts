/**
 * An LTI 1.3 platform for a real browser, on loopback: the LMS page that frames the tool and (when
 * asked) keeps data for it as 1EdTech's LTI Client Side postMessage says (`lti.put_data`,
 * `lti.get_data`, answered only to the tool's origin), and an OIDC authorization endpoint that
 * answers the browser with the auto-submitting form_post of an id_token it signs. Separate from the
 * workerd suite's simulator (test/lti/platform-server.ts), whose authorization endpoint answers data
 * rather than a page.
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { listenOnLoopback } from "../../helpers/loopback";

const LTI = "https://purl.imsglobal.org/spec/lti/claim/";

export interface BrowserPlatform {
  /** http://127.0.0.1:<port>: the issuer, and the origin of the LMS page and its endpoints. */
  url: string;
  clientId: string;
  deploymentId: string;
  /** The tool's redirect URI the authorization endpoint answers (set once the registration exists). */
  setTool(tool: { origin: string; redirectUri: string }): void;
  /** Every postMessage the LMS page answered (`subject key`), as the page reported them. */
  messages: string[];
  /** The authorization requests the endpoint answered. */
  authorizations: { state: string | null; redirect_uri: string | null }[];
  close(): Promise<void>;
}

const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The LMS page: the tool in an iframe, and (with `storage`) the platform storage answering it. */
function lmsPage(input: { loginUrl: string; toolOrigin: string; storage: boolean }): string {
  const script = `
const TOOL = ${JSON.stringify(input.toolOrigin)};
const store = new Map();
function report(line) { fetch("/report", { method: "POST", body: line }); }
window.addEventListener("message", (event) => {
  if (event.origin !== TOOL || !event.data || typeof event.data !== "object") return;
  const { subject, message_id, key, value } = event.data;
  if (subject === "lti.put_data") {
    store.set(event.origin + " " + key, value);
    report(subject + " " + key);
    event.source.postMessage({ subject: "lti.put_data.response", message_id, key, value }, event.origin);
  } else if (subject === "lti.get_data") {
    report(subject + " " + key);
    const k = event.origin + " " + key;
    event.source.postMessage(store.has(k)
      ? { subject: "lti.get_data.response", message_id, key, value: store.get(k) }
      : { subject: "lti.get_data.response", message_id, key, error: { code: "bad_request", message: "no such key" } }, event.origin);
  }
});`;
  return `<!doctype html><html><head><meta charset="utf-8"><title>Loopback LMS</title></head>
<body><h1>Loopback LMS</h1>
${input.storage ? `<script>${script}</script>` : ""}
<iframe name="tool" id="tool" width="800" height="500" src="${escapeHtml(input.loginUrl)}"></iframe>
</body></html>`;
}

export async function startBrowserPlatform(): Promise<BrowserPlatform> {
  const { publicKey, privateKey } = await generateKeyPair("RS256", { extractable: true });
  const kid = randomUUID();
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" };
  const clientId = `client-${randomUUID()}`;
  const deploymentId = `dep-${randomUUID()}`;
  let tool: { origin: string; redirectUri: string } | null = null;
  const messages: string[] = [];
  const authorizations: BrowserPlatform["authorizations"] = [];
  let origin = "";

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", origin);
    const html = (status: number, body: string) =>
      res.writeHead(status, { "content-type": "text/html; charset=utf-8" }).end(body);
    if (url.pathname === "/jwks")
      return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: [jwk] }));
    if (url.pathname === "/report" && req.method === "POST") {
      let body = "";
      for await (const chunk of req) body += chunk;
      messages.push(body);
      return res.writeHead(204).end();
    }
    if (url.pathname === "/lms" && tool) {
      // The platform starts the launch: third-party initiated login, in the tool's frame.
      const login = new URL(url.searchParams.get("login") ?? "");
      const query = new URLSearchParams({
        iss: origin,
        login_hint: "hint-42",
        target_link_uri: url.searchParams.get("target") ?? "",
        client_id: clientId,
        lti_deployment_id: deploymentId,
      });
      const storageTarget = url.searchParams.get("storage_target");
      if (storageTarget) query.set("lti_storage_target", storageTarget);
      login.search = query.toString();
      return html(
        200,
        lmsPage({
          loginUrl: login.toString(),
          toolOrigin: tool.origin,
          storage: url.searchParams.get("answer_storage") === "1",
        }),
      );
    }
    if (url.pathname === "/authorize" && tool) {
      const redirectUri = url.searchParams.get("redirect_uri");
      const state = url.searchParams.get("state");
      authorizations.push({ state, redirect_uri: redirectUri });
      if (url.searchParams.get("client_id") !== clientId || redirectUri !== tool.redirectUri)
        return html(400, "<p>redirect_uri is not registered for this tool</p>");
      const now = Math.floor(Date.now() / 1000);
      const idToken = await new SignJWT({
        iss: origin,
        aud: clientId,
        sub: "learner-1",
        nonce: url.searchParams.get("nonce"),
        name: "Ada Lovelace",
        email: `ada.${randomUUID()}@lms.example`,
        [`${LTI}deployment_id`]: deploymentId,
        [`${LTI}version`]: "1.3.0",
        [`${LTI}message_type`]: "LtiResourceLinkRequest",
        [`${LTI}roles`]: ["http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"],
        [`${LTI}resource_link`]: { id: "rl-1", title: "Week 1" },
        [`${LTI}target_link_uri`]: redirectUri,
      })
        .setProtectedHeader({ alg: "RS256", typ: "JWT", kid })
        .setIssuedAt(now)
        .setExpirationTime(now + 300)
        .sign(privateKey);
      // The form_post response mode: the browser posts the id_token to the tool at once.
      return html(
        200,
        `<!doctype html><html><body><form method="post" action="${escapeHtml(redirectUri)}">
<input type="hidden" name="id_token" value="${escapeHtml(idToken)}">
<input type="hidden" name="state" value="${escapeHtml(state ?? "")}">
</form><script>document.forms[0].submit()</script></body></html>`,
      );
    }
    res.writeHead(404).end();
  });
  const listening = await listenOnLoopback(server);
  origin = listening.url;
  return {
    url: origin,
    clientId,
    deploymentId,
    setTool(value) {
      tool = value;
    },
    messages,
    authorizations,
    close: listening.close,
  };
}
