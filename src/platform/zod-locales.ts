// Bundled in place of zod's locale index (see `alias` in wrangler.toml): zod ships some fifty
// locales (about 260 KB of the minified bundle), every one evaluated and compiled at start-up,
// while this API answers in English only. zod's default locale, English, stays as it was.
export { default as en } from "zod/v4/locales/en.js";
