import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { enforce } from "../../../platform/auth/policy";
import { principalContext } from "../../../platform/http/context-middleware";
import { latestMove } from "../../../platform/move/service";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { presentMove } from "../move-present";
import { InstitutionPlacementSchema } from "../move-schemas";
import { mayMoveInstitution } from "../policy";
import { INSTITUTIONS } from "../prefixes";
import { InstitutionIdParam } from "../schemas";

export const getInstitutionMoveRoute = tokenRoute("institutions:read", {
  method: "get",
  path: `${INSTITUTIONS}/{id}/move`,
  tags: ["Institutions"],
  operationId: "getInstitutionMove",
  summary: "Where an institution lives, and its latest move",
  description:
    "Platform staff only. The database the institution lives in now and its latest move (null if none).",
  request: { params: InstitutionIdParam },
  responses: { 200: jsonResponse(InstitutionPlacementSchema, "Where it lives, and its latest move.") },
});

export function registerGetInstitutionMove(app: OpenAPIHono<AppEnv>) {
  app.openapi(getInstitutionMoveRoute, async (c) => {
    const ctx = principalContext(c);
    const { id } = c.req.valid("param");
    enforce(mayMoveInstitution(ctx.principal, { id }));
    const { database, move } = await latestMove(ctx, id);
    return c.json({ database, move: move ? presentMove(move) : null }, 200);
  });
}
