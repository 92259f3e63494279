// The D1 databases of wrangler.toml that institutions live in (docs/design/multi-database.md): DB,
// then DB_1, DB_2, … Every one of them gets the same migrations.
import { unstable_readConfig } from "wrangler";

/** Their binding names, DB first, then by number. */
export function databaseBindingNames(configPath = "./wrangler.toml") {
  const { d1_databases: databases = [] } = unstable_readConfig({ config: configPath });
  const ordinal = (name) => (name === "DB" ? 0 : Number(name.slice(3)));
  return databases
    .map((d) => d.binding)
    .filter((name) => /^DB(?:_[1-9][0-9]*)?$/.test(name))
    .sort((a, b) => ordinal(a) - ordinal(b));
}
