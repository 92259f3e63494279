import { z } from "@hono/zod-openapi";

/** `POST /api/institutions/{id}/move`'s body. */
export const StartMoveBody = z
  .object({
    database: z.string().min(1).openapi({
      description:
        "The D1 binding to move the institution to: one of this deployment's (the first, then `DB_1`, `DB_2`, …; `GET /api/institutions/{id}/move` names the current one).",
      example: "DB_1",
    }),
  })
  .strict()
  .openapi("StartInstitutionMove");

const Counts = z.record(z.string(), z.number().int()).openapi({
  description: "Rows by table.",
  example: { users: 120, attempts: 48210 },
});

export const InstitutionMoveSchema = z
  .object({
    id: z.string().openapi({ example: "mov_01JD3Q8W2X4Y5Z6A7B8C9D0E1F" }),
    institution_id: z.string(),
    source: z.string().openapi({ description: "The database it is moved from.", example: "DB_2" }),
    target: z.string().openapi({ description: "The database it is moved to.", example: "DB_1" }),
    state: z.enum(["queued", "copying", "switching", "deleting", "completed", "failed"]).openapi({
      description:
        "`queued`; `copying` (reads and writes go on in the source); `switching` (writes answer `503 institution_moving` for a few seconds while the last copy is made and verified; reads are served); `deleting` (the institution lives in the target; the source's rows are being removed); `completed`; `failed` (`error` says why and where the institution lives).",
    }),
    progress: z.object({
      copied: Counts.openapi({ description: "Rows copied by table (a row copied again counts again)." }),
      verified: Counts.openapi({ description: "Rows verified by table: the same keys on both sides." }),
      deleted: Counts.openapi({ description: "Rows deleted from the source by table." }),
      freeze_ms: z.number().int().nullable().openapi({
        description: "How long the institution's writes were refused, once it switched; null before.",
      }),
    }),
    error: z.string().nullable(),
    created_at: z.string(),
    completed_at: z.string().nullable(),
  })
  .openapi("InstitutionMove");

export const InstitutionPlacementSchema = z
  .object({
    database: z
      .string()
      .openapi({ description: "The database the institution lives in now.", example: "DB_1" }),
    /** Its latest move, if any. */
    move: z.union([InstitutionMoveSchema, z.null()]),
  })
  .openapi("InstitutionPlacement");
