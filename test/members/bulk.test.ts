import { parse } from "csv-parse/sync";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { invitations } from "../../src/db/schema";
import { createTenant, mintToken } from "../helpers/tenants";
import {
  acceptInvitation,
  allMembers,
  bulkPath,
  call,
  callJson,
  db,
  groupCount,
  invitationToken,
  outboxOf,
  setSeats,
  uniqueEmail,
  uploadCsv,
  userCount,
} from "./support";

const CRLF = "\r\n";

describe("bulk upload", () => {
  it("creates, then finds nothing to change on the same file again", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const [a, b] = [uniqueEmail("a"), uniqueEmail("b")];
    const csv = `email,name,role,external_id,groups${CRLF}${a},Ana Lima,instructor,S-1,class-7b;french${CRLF}${b},Bo Berg,,S-2,${CRLF}`;
    const first = await uploadCsv(tenant.admin.token, id, csv);
    expect(first.res.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({
      status: "completed",
      dry_run: false,
      mode: "upsert",
      counts: { created: 2, updated: 0, unchanged: 0, suspended: 0, rejected: 0 },
    });
    expect(first.body.rows.map((r: any) => [r.line, r.outcome])).toEqual([
      [2, "created"],
      [3, "created"],
    ]);
    expect(first.body.rows[0].invitation_url).toMatch(/\/dashboard\/accept-invitation\?token=inv_/);
    const members = await allMembers(tenant.admin.token, id, "status=invited");
    expect(members.map((m) => [m.email, m.role, m.external_id, m.groups])).toEqual([
      [a, "instructor", "S-1", ["class-7b", "french"]],
      [b, "learner", "S-2", []],
    ]);
    const accepted = await acceptInvitation(invitationToken(first.body.rows[0].invitation_url));
    expect(accepted.res.status).toBe(200);

    const again = await uploadCsv(tenant.admin.token, id, csv);
    expect(again.res.status).toBe(200);
    expect(again.body.counts).toEqual({ created: 0, updated: 0, unchanged: 2, suspended: 0, rejected: 0 });
    expect(again.body.rows.every((r: any) => r.invitation_url === null)).toBe(true);
    const created = await outboxOf(id, "member.created");
    expect(created.filter((e) => [a, b].includes(e.email))).toHaveLength(2);
    // The payload as a single create writes it: the catalogue's fields, external_id and groups.
    expect(created.find((e) => e.email === a)).toEqual({
      user_id: first.body.rows[0].member_id,
      email: a,
      name: "Ana Lima",
      role: "instructor",
      status: "invited",
      external_id: "S-1",
      groups: ["class-7b", "french"],
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    });
  });

  it("updates by external_id, else by e-mail, and reports the changes as events", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const a = uniqueEmail("a");
    await uploadCsv(tenant.admin.token, id, `email,name,external_id${CRLF}${a},Ana,S-9${CRLF}`);
    const renamed = uniqueEmail("renamed");
    const res = await uploadCsv(
      tenant.admin.token,
      id,
      `external_id,email,name,role${CRLF}S-9,${renamed},Ana Lima,instructor${CRLF},${tenant.learner.email},Learner Renamed,${CRLF}`,
    );
    expect(res.res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.counts).toMatchObject({ created: 0, updated: 2, rejected: 0 });
    const updated = await outboxOf(id, "member.updated");
    expect(updated).toContainEqual(
      expect.objectContaining({
        changes: {
          email: { from: a, to: renamed },
          name: { from: "Ana", to: "Ana Lima" },
          role: { from: "learner", to: "instructor" },
        },
      }),
    );
    expect(updated).toContainEqual(
      expect.objectContaining({
        user_id: tenant.learner.id,
        changes: { name: { from: "Test learner", to: "Learner Renamed" } },
      }),
    );
  });

  it("shows a member renamed by an upload on the member's tokens at once (GET /api/auth/me)", async () => {
    const tenant = await createTenant();
    const me = async () => (await callJson("/api/auth/me", { token: tenant.learner.token })).body.user;
    expect((await me()).name).toBe("Test learner");
    const res = await uploadCsv(
      tenant.admin.token,
      tenant.institution.id,
      `email,name${CRLF}${tenant.learner.email},Learner Renamed${CRLF}`,
    );
    expect(res.res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.counts).toMatchObject({ updated: 1 });
    expect((await me()).name).toBe("Learner Renamed");
  });

  it("reads BOM, LF, quoted commas, quotes and line breaks; rejects bad rows without blocking the rest", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const [a, b, c] = [uniqueEmail("a"), uniqueEmail("b"), uniqueEmail("c")];
    const csv =
      "\uFEFFEMAIL,Name,Role,Note\n" +
      `${a},"Lima, Ana ""the first""",learner\n` +
      // A line break is no part of a name (a display string): here it is in a column the upload ignores.
      `${b},Two Lines,learner,"first\nsecond"\n` +
      "not-an-email,X,learner\n" +
      `${c},Y,wizard\n` +
      `${a.toUpperCase()},Again,learner\n` +
      `${uniqueEmail("d")},Too high,platform_admin\n`;
    const { res, body } = await uploadCsv(tenant.admin.token, id, csv);
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.rows.map((r: any) => [r.line, r.outcome])).toEqual([
      [2, "created"],
      [3, "created"],
      [5, "rejected"],
      [6, "rejected"],
      [7, "rejected"],
      [8, "rejected"],
    ]);
    expect(body.rows[2].errors[0]).toMatch(/email/);
    expect(body.rows[3].errors[0]).toMatch(/"wizard" is not a role/);
    expect(body.rows[4].errors[0]).toBe("email: repeats line 2");
    expect(body.rows[5].errors[0]).toMatch(/role/);
    const members = await allMembers(tenant.admin.token, id, "status=invited");
    expect(members.map((m) => m.name).sort()).toEqual(['Lima, Ana "the first"', "Two Lines"]);

    const csvRes = await call(`${bulkPath(id)}/${body.id}/rejected.csv`, { token: tenant.admin.token });
    expect(csvRes.status).toBe(200);
    expect(csvRes.headers.get("Content-Type")).toBe("text/csv; charset=utf-8");
    const records = parse(await csvRes.text(), { columns: true }) as Record<string, string>[];
    expect(records.map((r) => [r.line, r.EMAIL, r.reason])).toEqual([
      ["5", "not-an-email", 'email: "not-an-email" is not an e-mail address'],
      ["6", c, 'role: "wizard" is not a role; use learner, instructor or institution_admin'],
      ["7", a.toUpperCase(), "email: repeats line 2"],
      [
        "8",
        expect.any(String),
        'role: "platform_admin" is not a role; use learner, instructor or institution_admin',
      ],
    ]);
  });

  it("reports the line each row starts on in the file, whatever its line ends", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const [a, b, c] = [uniqueEmail("a"), uniqueEmail("b"), uniqueEmail("c")];
    // Line 1 the header; 2 a; 3–4 b, a line break in a quoted cell; 5 blank; 6 a row of empty cells;
    // 7 c; 8 a again (rejected, naming line 2).
    const file = (end: string, inner: string, bom: string) =>
      `${bom}email,name,note${end}${a},A,${end}${b},B,"first${inner}second"${end}${end},,${end}` +
      `${c},"C, ""quoted""",${end}${a.toUpperCase()},Again,${end}`;
    const ends = { "CR LF": "\r\n", LF: "\n", CR: "\r" };
    for (const [endName, end] of Object.entries(ends)) {
      for (const [innerName, inner] of Object.entries(ends)) {
        for (const bom of ["", "\uFEFF"]) {
          const label = `${endName} line ends, ${innerName} in the quoted cell${bom ? ", BOM" : ""}`;
          const { res, body } = await uploadCsv(
            tenant.admin.token,
            id,
            file(end, inner, bom),
            "dry_run=true",
          );
          expect(res.status, `${label}: ${JSON.stringify(body)}`).toBe(200);
          expect(
            body.rows.map((r: any) => [r.line, r.email, r.outcome]),
            label,
          ).toEqual([
            [2, a, "created"],
            [3, b, "created"],
            [7, c, "created"],
            [8, a, "rejected"],
          ]);
          expect(body.rows[3].errors, label).toEqual(["email: repeats line 2"]);
        }
      }
    }
    // Broken quoting names the line as the editor shows it too (line 4, after a cell with a CR LF).
    const broken = await uploadCsv(
      tenant.admin.token,
      id,
      `email,note\r\n${a},"one\r\ntwo"\r\n${b},"bad"quote\r\n`,
      "dry_run=true",
    );
    expect(broken.res.status).toBe(422);
    expect(broken.body.detail).toMatch(/Invalid Closing Quote: .* at line 4 /);
  });

  it("refuses whole files that are not UTF-8, empty, without e-mail, too long or too big", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const latin1 = new Uint8Array([
      ...new TextEncoder().encode("email,name\r\nx@y.test,Ren"),
      0xe9,
      0x0d,
      0x0a,
    ]);
    for (const [body, message] of [
      [latin1, /UTF-8/],
      ["", /empty/],
      ["  \r\n", /empty/],
      ["name,role\r\nAna,learner\r\n", /no `email` column/],
      ["email,name\r\n", /no data rows/],
      [`email,name\r\nx@y.test,${"n".repeat(70_000)}\r\n`, /not valid CSV: .*65536/],
    ] as const) {
      const res = await uploadCsv(tenant.admin.token, id, body);
      expect(res.res.status, String(message)).toBe(422);
      expect(res.body.errors[0].path).toBe("file");
      expect(res.body.detail).toMatch(message);
    }
    const rows = Array.from({ length: 50_001 }, (_, i) => `u${i}@x.test`).join("\n");
    const tooMany = await uploadCsv(tenant.admin.token, id, `email\n${rows}\n`);
    expect(tooMany.res.status).toBe(422);
    expect(tooMany.body.detail).toMatch(/50001 data rows; at most 50000/);
    const huge = await uploadCsv(tenant.admin.token, id, `email\n${"x".repeat(5 * 1024 * 1024)}\n`);
    expect(huge.res.status).toBe(413);
    const json = await callJson(bulkPath(id), { token: tenant.admin.token, body: { email: "x@y.test" } });
    expect(json.res.status).toBe(415);
    expect(await allMembers(tenant.admin.token, id)).toHaveLength(3);
  });

  it("writes rows that outgrow one bound value in several statements, each row once", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const tag = uniqueEmail("wide").split("@")[0]!;
    // 1,000 members with 40 groups of 100 characters: each table's rows come to about 4 MB of JSON,
    // above D1's 2 MB per bound value, so every insert is split.
    const groups = Array.from({ length: 40 }, (_, g) => `${String(g).padStart(2, "0")}${"g".repeat(98)}`);
    const lines = ["email,external_id,groups"];
    for (let i = 0; i < 1000; i++) lines.push(`${tag}-${i}@bulk.test,${tag}-${i},${groups.join(";")}`);
    const upload = await uploadCsv(tenant.admin.token, id, `${lines.join(CRLF)}${CRLF}`);
    expect(upload.res.status, JSON.stringify(upload.body).slice(0, 300)).toBe(200);
    expect(upload.body.counts).toMatchObject({ created: 1000, rejected: 0 });
    expect(await userCount(id)).toBe(1003);
    expect(await groupCount(id)).toBe(40_000);
    expect(await db().$count(invitations, eq(invitations.institutionId, id))).toBe(1000);
    const created = await outboxOf(id, "member.created");
    expect(created).toHaveLength(1000);
    expect(created.every((e) => e.groups.length === 40)).toBe(true);
    expect(upload.body.rows_meta?.total ?? upload.body.rows.length).toBe(1000);
  });

  it("accepts multipart with a file part and a OneRoster users.csv", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const [t, s] = [uniqueEmail("t"), uniqueEmail("s")];
    const oneRoster =
      "sourcedId,status,dateLastModified,enabledUser,orgSourcedIds,role,username,userIds,givenName,familyName,middleName,identifier,email,sms,phone,agentSourcedIds,grades,password\r\n" +
      `T1,active,,true,org1,teacher,tea,,Tea,Cher,,,${t},,,,,\r\n` +
      `S1,active,,true,org1,student,stu,,Stu,Dent,,,${s},,,,05,\r\n`;
    const form = new FormData();
    form.append("file", new File([oneRoster], "users.csv", { type: "text/csv" }));
    const { res, body } = await callJson(bulkPath(id), { token: tenant.admin.token, rawBody: form });
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.counts.created).toBe(2);
    const members = await allMembers(tenant.admin.token, id, "status=invited");
    expect(members.map((m) => [m.name, m.role, m.external_id])).toEqual([
      ["Stu Dent", "learner", "S1"],
      ["Tea Cher", "instructor", "T1"],
    ]);
    const disable = `sourcedId,givenName,familyName,email,role,enabledUser\r\nS1,Stu,Dent,${s},student,false\r\n`;
    const off = await uploadCsv(tenant.admin.token, id, disable);
    expect(off.body.counts.updated).toBe(1);
    expect((await allMembers(tenant.admin.token, id, "status=suspended")).map((m) => m.external_id)).toEqual([
      "S1",
    ]);
  });

  it("dry run answers what a real run would do and writes nothing", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const csv = `email,name${CRLF}${uniqueEmail()},New${CRLF}${tenant.learner.email},Renamed${CRLF}bad,X${CRLF}`;
    const before = await allMembers(tenant.admin.token, id);
    const dry = await uploadCsv(tenant.admin.token, id, csv, "dry_run=true");
    expect(dry.res.status, JSON.stringify(dry.body)).toBe(200);
    expect(await allMembers(tenant.admin.token, id)).toEqual(before);
    expect(dry.body.rows.every((r: any) => r.invitation_url === null)).toBe(true);
    // No id that does not exist: null for the member it would create, the real id for the one it updates.
    expect(dry.body.rows.map((r: any) => [r.outcome, r.member_id])).toEqual([
      ["created", null],
      ["updated", tenant.learner.id],
      ["rejected", null],
    ]);
    const real = await uploadCsv(tenant.admin.token, id, csv);
    expect(real.body.counts).toEqual(dry.body.counts);
    expect(real.body.rows.map((r: any) => r.outcome)).toEqual(dry.body.rows.map((r: any) => r.outcome));
  });

  it("sync suspends absent members, refusing more than 10 % unless forced", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const emails = Array.from({ length: 17 }, () => uniqueEmail("s"));
    const all = [tenant.admin.email, tenant.instructor.email, tenant.learner.email, ...emails];
    const csv = (list: string[]) => `email${CRLF}${list.join(CRLF)}${CRLF}`;
    expect((await uploadCsv(tenant.admin.token, id, csv(all))).res.status).toBe(200);
    // 20 members; leaving out 2 (10 %) is allowed, 3 is not.
    const three = await uploadCsv(tenant.admin.token, id, csv(all.slice(0, 17)), "mode=sync");
    expect(three.res.status).toBe(409);
    expect(three.body).toMatchObject({ code: "sync_threshold_exceeded", would_suspend: 3, members: 20 });
    const apiToken = await mintToken(tenant.learner, ["content:read"]);
    const two = await uploadCsv(
      tenant.admin.token,
      id,
      csv(all.filter((e) => e !== tenant.learner.email && e !== emails[0])),
      "mode=sync",
    );
    expect(two.res.status, JSON.stringify(two.body)).toBe(200);
    expect(two.body.counts.suspended).toBe(2);
    expect((await call("/api/auth/me", { token: apiToken.token })).status).toBe(401);
    const forced = await uploadCsv(tenant.admin.token, id, csv([tenant.admin.email]), "mode=sync&force=true");
    expect(forced.res.status).toBe(200);
    expect(forced.body.counts.suspended).toBe(17);
    expect((await allMembers(tenant.admin.token, id, "status=active")).map((m) => m.email)).toEqual([
      tenant.admin.email,
    ]);
  });

  it("rejects rows beyond the seats and is refused to instructors", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    await setSeats(tenant, 4);
    const { body } = await uploadCsv(
      tenant.admin.token,
      id,
      `email${CRLF}${uniqueEmail()}${CRLF}${uniqueEmail()}${CRLF}`,
    );
    expect(body.rows.map((r: any) => r.outcome)).toEqual(["created", "rejected"]);
    expect(body.rows[1].errors[0]).toMatch(/seat_limit_reached/);
    const asInstructor = await uploadCsv(tenant.instructor.token, id, `email${CRLF}${uniqueEmail()}${CRLF}`);
    expect(asInstructor.res.status).toBe(403);
  });
});
