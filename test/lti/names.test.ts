import { env } from "cloudflare:test";
import { expect, it } from "vitest";
import { isSafeForDisplay } from "../../src/platform/text";
import { createTenant } from "../helpers/tenants";
import { launch, registerPlatform } from "./support";

async function storedName(userId: string): Promise<string | undefined> {
  const row = await env.DB.prepare("SELECT name FROM users WHERE id = ?")
    .bind(userId)
    .first<{ name: string }>();
  return row?.name;
}

it("a launch whose name is 5,000 characters of markup and control characters succeeds with the name cleaned and cut to 200", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const unit = "<img src=x onerror=alert(1)>\u0000\u0007\u202E\n\t Ada ";
  const name = unit.repeat(Math.ceil(5_000 / unit.length)).slice(0, 5_000);
  expect(name.length).toBe(5_000);
  const { res, body } = await launch(reg, { name });
  expect(res.status, JSON.stringify(body)).toBe(200);
  expect(body.launch.status).toBe("succeeded");
  const cleaned = body.user.name as string;
  expect(cleaned.length).toBeLessThanOrEqual(200);
  expect(cleaned.length).toBeGreaterThan(150);
  expect(isSafeForDisplay(cleaned)).toBe(true);
  expect(cleaned.startsWith("<img src=x onerror=alert(1)> Ada <img src=x onerror=alert(1)> Ada")).toBe(true);
  expect(cleaned).not.toMatch(/\s{2}|^\s|\s$/);
  expect(await storedName(body.user.id)).toBe(cleaned);

  // The same person again, with a bidi override in given and family names only: the update is cleaned too.
  const again = await launch(reg, {
    sub: body.launch.sub,
    name: undefined,
    given_name: "\u202EAda\u0000",
    family_name: " King\u2066 ",
  });
  expect(again.res.status, JSON.stringify(again.body)).toBe(200);
  expect(again.body.user).toMatchObject({ id: body.user.id, name: "Ada King" });
  expect(await storedName(body.user.id)).toBe("Ada King");
});

it("a launch whose name has nothing left after cleaning is named 'LTI user'; an e-mail with a control character is not used", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const { res, body } = await launch(reg, {
    name: "\u202E\u0000 \u0007",
    given_name: "\u0001",
    family_name: undefined,
    email: "ada\u202E@lms.example",
  });
  expect(res.status, JSON.stringify(body)).toBe(200);
  expect(body.user.name).toBe("LTI user");
  expect(body.user.email).toMatch(/^lti-[0-9a-f]{24}@lti\.invalid$/);
});
