import { z } from "zod";

/** A message of the delivery queue: one delivery to attempt. */
export const DeliveryMessage = z.object({ delivery_id: z.string().min(1) });
export type DeliveryMessage = z.infer<typeof DeliveryMessage>;
