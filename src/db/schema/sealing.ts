import { sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * One-off upgrades of sealed values, by name, once finished. `legacy-v1-retired`: every `v1.`
 * value was re-sealed to its row, and `v1.` values are refused from then on.
 */
export const sealingUpgrades = sqliteTable("sealing_upgrades", {
  name: text("name").primaryKey(),
  completedAt: text("completed_at").notNull(),
});
