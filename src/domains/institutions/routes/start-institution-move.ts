import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { enforce } from "../../../platform/auth/policy";
import { principalContext } from "../../../platform/http/context-middleware";
import { startMove } from "../../../platform/move/service";
import { jsonBody, jsonResponse, tokenRoute } from "../../../platform/openapi";
import { errorResponses } from "../../../platform/openapi-problems";
import { presentMove } from "../move-present";
import { InstitutionMoveSchema, StartMoveBody } from "../move-schemas";
import { mayMoveInstitution } from "../policy";
import { INSTITUTIONS } from "../prefixes";
import { InstitutionIdParam } from "../schemas";

export const startInstitutionMoveRoute = tokenRoute("institutions:write", {
  method: "post",
  path: `${INSTITUTIONS}/{id}/move`,
  tags: ["Institutions"],
  operationId: "startInstitutionMove",
  summary: "Move an institution to another database",
  description:
    "Platform staff only. Starts moving the institution, online, to another D1 database of the deployment: its rows are copied, then its writes are refused for a few seconds (`503 institution_moving`, with `Retry-After`) while the last copy is made and verified, then it lives in the target and its rows are deleted from the source. Its reads are served throughout. Follow it with `GET /api/institutions/{id}/move`.",
  request: { params: InstitutionIdParam, body: jsonBody(StartMoveBody) },
  responses: {
    202: jsonResponse(InstitutionMoveSchema, "The move, queued."),
    409: {
      ...errorResponses[409],
      description:
        "`institution_move_in_progress` (its `move_id` names the running move), `institution_already_there`.",
    },
    422: { ...errorResponses[422], description: "`database` is not one of this deployment's databases." },
  },
});

export function registerStartInstitutionMove(app: OpenAPIHono<AppEnv>) {
  app.openapi(startInstitutionMoveRoute, async (c) => {
    const ctx = principalContext(c);
    const { id } = c.req.valid("param");
    enforce(mayMoveInstitution(ctx.principal, { id }));
    const move = await startMove(ctx, {
      institutionId: id,
      target: c.req.valid("json").database,
      userId: ctx.principal.user.id,
    });
    c.header("Location", `${new URL(c.req.url).origin}${INSTITUTIONS}/${id}/move`);
    return c.json(presentMove(move), 202);
  });
}
