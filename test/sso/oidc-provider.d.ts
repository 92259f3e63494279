// oidc-provider ships no type declarations; the tests' provider (openid-provider.ts) uses it untyped.
declare module "oidc-provider";
