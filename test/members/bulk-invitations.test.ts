import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { HeldQueue } from "../exports/support";
import { createTenant, mintToken, type Tenant } from "../helpers/tenants";
import {
  acceptInvitation,
  bulkPath,
  call,
  callJson,
  invitationToken,
  membersPath,
  uniqueEmail,
  uploadCsv,
} from "./support";

let deliveries = 0;

/** Runs the worker's queue handler on one bulk message, as the queue would. */
async function deliver(bindings: Cloudflare.Env, body: unknown) {
  deliveries += 1;
  const batch = createMessageBatch("lingua-bulk-members", [
    { id: `reissue-${deliveries}`, timestamp: new Date(), attempts: 1, body },
  ]);
  const ctx = createExecutionContext();
  await worker.queue!(batch as MessageBatch<unknown>, bindings, ctx);
  await getQueueResult(batch, ctx);
}

function rowsCsv(count: number, tag: string): string {
  const lines = ["email,name,external_id"];
  for (let i = 0; i < count; i++) lines.push(`${tag}-${i}@bulk.test,Member ${i},${tag}-${i}`);
  return `${lines.join("\r\n")}\r\n`;
}

/** A queued upload of `count` rows, held until `finish` delivers its messages. */
async function queuedUpload(tenant: Tenant, count: number) {
  const queue = new HeldQueue();
  const bindings = { ...env, BULK_QUEUE: queue as unknown as Queue } as Cloudflare.Env;
  const tag = uniqueEmail("re").split("@")[0]!;
  const upload = await uploadCsv(
    tenant.admin.token,
    tenant.institution.id,
    rowsCsv(count, tag),
    "",
    bindings,
  );
  expect(upload.res.status, JSON.stringify(upload.body)).toBe(202);
  return {
    tag,
    jobId: upload.body.id as string,
    jobPath: upload.res.headers.get("Location")!,
    finish: async () => {
      while (queue.messages.length > 0) await deliver(bindings, queue.take());
    },
  };
}

function reissue(
  tenant: Tenant,
  jobId: string,
  token = tenant.admin.token,
  headers: Record<string, string> = {},
) {
  return callJson(`${bulkPath(tenant.institution.id)}/${jobId}/invitations`, {
    method: "POST",
    token,
    headers,
  });
}

async function memberByExternalId(tenant: Tenant, externalId: string) {
  const found = await callJson(`${membersPath(tenant.institution.id)}?external_id=${externalId}`, {
    token: tenant.admin.token,
  });
  return found.body.data[0];
}

describe("re-issuing a bulk upload's invitations", () => {
  it("gives the still-invited members of a finished upload new links when the report's were lost", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const upload = await queuedUpload(tenant, 1001);

    // Still queued: nothing to re-issue yet.
    const early = await reissue(tenant, upload.jobId);
    expect(early.res.status).toBe(409);
    expect(early.body).toMatchObject({ code: "bulk_not_finished", bulk_status: "queued" });
    await upload.finish();

    // Line 2's link was shown once (then lost); the others were never read.
    const firstRead = await callJson(`${upload.jobPath}?per_page=1`, { token: tenant.admin.token });
    const oldLink = firstRead.body.rows[0].invitation_url as string;
    expect(oldLink).toMatch(/token=inv_/);

    // Meanwhile: line 3's member accepted (through a re-invite), line 4's was removed, line 5's suspended.
    const accepted = await memberByExternalId(tenant, `${upload.tag}-1`);
    const reinvited = await callJson(`/api/institutions/${id}/invitations`, {
      token: tenant.admin.token,
      body: { member_id: accepted.id },
    });
    expect((await acceptInvitation(invitationToken(reinvited.body.invitation_url))).res.status).toBe(200);
    const removed = await memberByExternalId(tenant, `${upload.tag}-2`);
    expect(
      (await call(`${membersPath(id)}/${removed.id}`, { method: "DELETE", token: tenant.admin.token }))
        .status,
    ).toBe(204);
    const suspended = await memberByExternalId(tenant, `${upload.tag}-3`);
    const suspend = await call(`${membersPath(id)}/${suspended.id}`, {
      method: "PATCH",
      token: tenant.admin.token,
      body: { status: "suspended" },
    });
    expect(suspend.status).toBe(200);

    const { res, body } = await reissue(tenant, upload.jobId);
    expect(res.status, JSON.stringify(body).slice(0, 400)).toBe(201);
    expect(body).toMatchObject({
      job_id: upload.jobId,
      reissued: 998,
      skipped: { accepted: 1, removed: 1, suspended: 1, role_above_yours: 0 },
    });
    // The first 1,000 created rows (lines 2–1001) less the three left alone; line 1002 is on the next page.
    expect(body.invitations).toHaveLength(997);
    expect(body.invitations.map((i: any) => i.line).slice(0, 3)).toEqual([2, 6, 7]);
    expect(body.invitations[0]).toMatchObject({
      line: 2,
      member_id: firstRead.body.rows[0].member_id,
      email: `${upload.tag}-0@bulk.test`,
    });
    expect(body.next).toBe(`${upload.jobPath}?outcome=created&per_page=1000&page=2`);

    // The old link is dead (re-invite's semantics); the new one works, once.
    expect((await acceptInvitation(invitationToken(oldLink))).res.status).toBe(400);
    const fresh = invitationToken(body.invitations[0].invitation_url);
    const signedIn = await acceptInvitation(fresh);
    expect(signedIn.res.status, JSON.stringify(signedIn.body)).toBe(200);
    expect(signedIn.body.user.id).toBe(body.invitations[0].member_id);
    expect((await acceptInvitation(fresh)).res.status).toBe(400);

    // The rest show on the next page of the report, the first time it is read.
    const next = await callJson(body.next, { token: tenant.admin.token });
    expect(next.body.rows).toEqual([
      expect.objectContaining({ line: 1002, invitation_url: expect.any(String) }),
    ]);
    expect((await acceptInvitation(invitationToken(next.body.rows[0].invitation_url))).res.status).toBe(200);
    const nextAgain = await callJson(body.next, { token: tenant.admin.token });
    expect(nextAgain.body.rows[0].invitation_url).toBeNull();

    // Each call re-issues each still-invited member once: the links of the call before stop working.
    const again = await reissue(tenant, upload.jobId);
    expect(again.body).toMatchObject({
      reissued: 996,
      skipped: { accepted: 3, removed: 1, suspended: 1, role_above_yours: 0 },
    });
    expect(again.body.invitations).toHaveLength(996);
    expect((await acceptInvitation(invitationToken(body.invitations[1].invitation_url))).res.status).toBe(
      400,
    );
    expect(
      (await acceptInvitation(invitationToken(again.body.invitations[0].invitation_url))).res.status,
    ).toBe(200);
  });

  it("replays an Idempotency-Key, and is refused to other institutions, dry runs and callers who may not invite", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const id = tenant.institution.id;
    const upload = await uploadCsv(tenant.admin.token, id, `email${"\r\n"}${uniqueEmail("small")}${"\r\n"}`);
    expect(upload.res.status).toBe(200);
    const jobId = upload.body.id;

    const first = await reissue(tenant, jobId, tenant.admin.token, { "Idempotency-Key": "reissue-1" });
    expect(first.res.status).toBe(201);
    expect(first.body.reissued).toBe(1);
    expect(first.body.next).toBeNull();
    const replay = await reissue(tenant, jobId, tenant.admin.token, { "Idempotency-Key": "reissue-1" });
    expect(replay.res.status).toBe(201);
    expect(replay.res.headers.get("Idempotent-Replayed")).toBe("true");
    expect(replay.body).toEqual(first.body);
    // The replay issued nothing new: the first call's link still works.
    expect(
      (await acceptInvitation(invitationToken(first.body.invitations[0].invitation_url))).res.status,
    ).toBe(200);

    // Another institution's job, through either institution's path: 404.
    expect((await reissue(other, jobId)).res.status).toBe(404);
    const crossed = await callJson(`${bulkPath(other.institution.id)}/${jobId}/invitations`, {
      method: "POST",
      token: tenant.admin.token,
    });
    expect(crossed.res.status).toBe(404);
    expect((await reissue(tenant, "blk_unknown")).res.status).toBe(404);

    // An instructor reads uploads but may not invite; nor may a read-only token of an admin.
    const instructor = await reissue(tenant, jobId, tenant.instructor.token);
    expect(instructor.res.status).toBe(403);
    expect(instructor.body).toMatchObject({ code: "missing_ability" });
    expect(instructor.body.detail).toMatch(/members:write/);
    const readOnly = await mintToken(tenant.admin, ["members:read"]);
    expect((await reissue(tenant, jobId, readOnly.token)).res.status).toBe(403);

    const dry = await uploadCsv(
      tenant.admin.token,
      id,
      `email${"\r\n"}${uniqueEmail("dry")}${"\r\n"}`,
      "dry_run=true",
    );
    const refused = await reissue(tenant, dry.body.id);
    expect(refused.res.status).toBe(409);
    expect(refused.body.code).toBe("conflict");
    expect(refused.body.detail).toMatch(/dry run/);
  });
});
