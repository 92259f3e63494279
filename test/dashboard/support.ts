import { call } from "../helpers/api";
import { freshIp, PASSWORD } from "../helpers/tenants";

/** The browser's side of the dashboard: cookies kept by name, forms posted as a browser posts them. */
export class Browser {
  readonly cookies = new Map<string, string>();
  readonly ip = freshIp();

  cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  }

  keep(res: Response): Response {
    for (const line of setCookies(res)) {
      const [pair] = line.split(";");
      const at = pair!.indexOf("=");
      const name = pair!.slice(0, at);
      const value = pair!.slice(at + 1);
      if (/max-age=0/i.test(line) || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }

  async get(path: string): Promise<Response> {
    return this.keep(
      await call(path, { headers: { Cookie: this.cookieHeader(), "CF-Connecting-IP": this.ip } }),
    );
  }

  /** Posts `fields` as an HTML form does (same origin unless `headers` says otherwise). */
  async post(
    path: string,
    fields: Record<string, string | string[]>,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    const body = new URLSearchParams();
    for (const [name, value] of Object.entries(fields))
      for (const v of Array.isArray(value) ? value : [value]) body.append(name, v);
    return this.keep(
      await call(path, {
        method: "POST",
        rawBody: body.toString(),
        headers: {
          "Content-Type": "application/x-www-form-urlencoded",
          Cookie: this.cookieHeader(),
          "CF-Connecting-IP": this.ip,
          Origin: "https://api.lingua.test",
          ...headers,
        },
      }),
    );
  }

  /** Posts a multipart form with `files` as file parts, as a browser posts a file input. */
  async postFiles(
    path: string,
    fields: Record<string, string>,
    files: Record<string, { name: string; text: string; type?: string }>,
  ): Promise<Response> {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    for (const [name, file] of Object.entries(files))
      form.append(name, new File([file.text], file.name, { type: file.type ?? "text/csv" }));
    const request = new Request("https://api.lingua.test/", { method: "POST", body: form });
    return this.keep(
      await call(path, {
        method: "POST",
        rawBody: new Uint8Array(await request.arrayBuffer()),
        headers: {
          "Content-Type": request.headers.get("Content-Type")!,
          Cookie: this.cookieHeader(),
          "CF-Connecting-IP": this.ip,
          Origin: "https://api.lingua.test",
        },
      }),
    );
  }

  /** Signs in through the sign-in page's form; answers the form's response (303 on success). */
  async signIn(email: string, password = PASSWORD): Promise<Response> {
    const page = await this.get("/dashboard/sign-in");
    const csrf = csrfOf(await page.text());
    return this.post("/dashboard/sign-in", { _csrf: csrf, email, password, next: "/dashboard" });
  }

  /** The CSRF token of the page at `path` (a signed-in page's forms carry it). */
  async csrfFor(path = "/dashboard"): Promise<string> {
    const res = await this.get(path);
    return csrfOf(await res.text());
  }

  get session(): string | undefined {
    return this.cookies.get("__Host-lingua_session");
  }
}

/** Every `Set-Cookie` line of a response (workerd has `getSetCookie`; these types predate it). */
export function setCookies(res: Response): string[] {
  return (res.headers as unknown as { getSetCookie(): string[] }).getSetCookie();
}

export function csrfOf(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match) throw new Error(`no CSRF field in ${html.slice(0, 500)}`);
  return match[1]!;
}

/** Every `<script …>` opening tag of a page. */
export function scriptTags(html: string): string[] {
  return html.match(/<script\b[^>]*>/g) ?? [];
}

/** The text of a page without its tags, whitespace collapsed (what a person reads). */
export function textOf(html: string): string {
  return html
    .replace(/<[^>]+>/g, " ")
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .trim();
}
